"""specviz: a real speculative-decoding engine, small enough to read beside the lessons."""

"""Hosting: the host's config file (model sets, limits) and the state a browser session keeps.

It uses the generator to load and check model sets; the generator never imports it.
"""

"""Pure builders of what the pages draw: escaped HTML (tokens, blocks, cache) and plotly figures.

Nothing here imports streamlit or runs a model: each function takes plain data (usually a
`Round` or lists of numbers) and returns an HTML string or a `plotly.graph_objects.Figure`,
so tests can call them directly. Every piece of token text passes through `html.escape`.
"""

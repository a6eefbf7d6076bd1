"""The notebook layer: `%%ascend_kernel` magic, the Studio widget and its views.

The core library never imports this package; it imports IPython, ipywidgets and plotly lazily.
"""

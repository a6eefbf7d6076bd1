"""The notebook layer: the Studio, its magic and views, and the bridge to the "Ascend C" side panel."""

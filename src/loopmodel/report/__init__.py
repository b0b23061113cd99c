"""Rendering of results: text (rich), JSON documents and their types, pictures; never imports the
command line or a workflow."""

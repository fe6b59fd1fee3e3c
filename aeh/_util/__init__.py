"""Small helpers every layer may use: files and JSON, safe YAML, lazy names, registries, figures.

The rule: a module here imports nothing of aeh but `aeh.errors`, `aeh.models` and its siblings in
`aeh._util` (an import-linter contract holds it), so any package can use it without a cycle.
Each module's name is public within aeh; the package is not part of aeh's API.
"""

"""Shadows rfc3987-syntax in the test Ray head's processes: jsonschema then skips its IRI check."""

raise ImportError("rfc3987_syntax is left out of the test Ray cluster's processes")

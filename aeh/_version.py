from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("aeh-harness")  # the distribution; the import name is aeh
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0+src"

__version__ = "@PUBLIC_VERSION@"

"""Stand-in for SGLang's server and one-batch benchmark in the molecule test bed (see README.md)."""

"""The foundation every other layer stands on: errors, running commands, files, YAML, names."""

"""Tests of the command line: written with that layer."""

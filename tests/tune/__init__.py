"""Tests of the tune layer (explore, autotune, the plan cache, ...): written with that layer."""

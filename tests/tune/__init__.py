"""Tests of the tune layer: explore, autotune, the plan cache, fusion reports, bench, sweeps."""

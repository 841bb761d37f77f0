"""A suite split over machines and put back together: ``--uiground-shard I/N`` runs part I of N of
each suite (:mod:`.plan` picks it) and leaves a shard manifest beside its records
(:mod:`.manifest`); ``python -m pytest_uiground merge`` checks that the shards belong together (:mod:`.shards`) and
replays their records through one ordinary run, so the verdict, the baseline and every output are
the ones a single run writes (:mod:`.merge`).
"""

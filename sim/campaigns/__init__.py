"""Campaigns: grids of replays over the lake's logs (`grid`), run resumably on a process pool or a Ray
cluster (`runner`, `executors`), with week resamples of logs (`resample`) and the tables and figures
made from their stored runs (`report`)."""

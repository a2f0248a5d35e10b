# The library's sources. A variant with intrinsics gets its ISA flags here,
# on its own file only; the dispatcher decides at run time whether it runs.
set(ATTN_SOURCES
  impls/api.c
  impls/cpu_features.c
  impls/table.c
  impls/naive.c
  impls/blocked.c
  reference/reference.c
  reference/metrics.c
)
set(ATTN_EXTRA_INCLUDES "")
set(ATTN_EXTRA_LIBS "")

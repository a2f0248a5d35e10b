# The attnbench CLI: C11 everywhere; only the Google Benchmark shim is C++.
set(ATTNBENCH_SOURCES
  harness/main.c
  harness/cli.c
  harness/cases.c
  harness/accuracy.c
  harness/machine.c
  harness/cmd_list.c
  harness/cmd_verify.c
  harness/cmd_demo.c
)
set(ATTNBENCH_LIBS "")

# Everything but main.c also goes into a small library the tests link.
set(ATTNBENCH_CORE_SOURCES ${ATTNBENCH_SOURCES})
list(REMOVE_ITEM ATTNBENCH_CORE_SOURCES harness/main.c)
add_library(attnbench_core STATIC ${ATTNBENCH_CORE_SOURCES})
target_include_directories(attnbench_core PUBLIC harness)
target_link_libraries(attnbench_core PUBLIC attn_static ${ATTNBENCH_LIBS})

add_executable(attnbench harness/main.c)
target_link_libraries(attnbench PRIVATE attnbench_core)

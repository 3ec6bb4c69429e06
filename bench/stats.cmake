# bench/stats/: the statistics (summaries, intervals, the significance
# tests, the paired estimator); pure functions, no I/O, below everything.
# Builds opcost_stats and its test. Included by the top-level
# CMakeLists.txt after enable_testing().
file(GLOB OPCOST_STATS_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/stats/*.c)
add_library(opcost_stats STATIC ${OPCOST_STATS_SOURCES})
target_include_directories(opcost_stats PUBLIC ${CMAKE_CURRENT_LIST_DIR}/stats)
target_compile_options(opcost_stats PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_stats PUBLIC m)

# The test shares the C tests' harness (C_EXPECT, c_report in c_samples.c).
add_executable(test_paired ${PROJECT_SOURCE_DIR}/tests/c/test_paired.c
  ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c)
target_link_libraries(test_paired PRIVATE opcost_stats rowops_testref)
target_compile_options(test_paired PRIVATE ${OPCOST_WARNINGS})
add_test(NAME test_paired COMMAND test_paired)

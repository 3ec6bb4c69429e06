# bench/ libraries below the engine: the statistics, the results CSV, what
# reads results (analysis) and the torch-free core of the engine, with their
# C tests. Included from the top-level CMakeLists.txt after enable_testing().
find_package(Threads REQUIRED)

# bench/stats/: the statistics (summaries, intervals, the significance
# tests, the paired estimator); pure functions, no I/O, below everything.
file(GLOB OPCOST_STATS_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/stats/*.c)
add_library(opcost_stats STATIC ${OPCOST_STATS_SOURCES})
target_include_directories(opcost_stats PUBLIC ${CMAKE_CURRENT_LIST_DIR}/stats)
target_compile_options(opcost_stats PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_stats PUBLIC m)

# bench/results/: the row type, the results CSV (schema, writer, parser,
# sidecar); what the engine writes and analysis reads.
file(GLOB OPCOST_RESULTS_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/results/*.c)
add_library(opcost_results STATIC ${OPCOST_RESULTS_SOURCES})
target_include_directories(opcost_results PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/results)
target_compile_options(opcost_results PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_results PUBLIC opcost_io m)

# bench/analysis/: what reads results (check, compare, targets, plots); no
# torch, no engine.
file(GLOB OPCOST_ANALYSIS_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/analysis/*.c)
add_library(opcost_analysis STATIC ${OPCOST_ANALYSIS_SOURCES})
target_include_directories(opcost_analysis PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/analysis)
target_compile_definitions(opcost_analysis PRIVATE
  OPCOST_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_compile_options(opcost_analysis PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_analysis PUBLIC opcost_results opcost_stats
  opcost_shapes m rowops_kernels)

# bench/measure/: the torch-free core of the engine (ceilings, stopping
# rules, attribution); the rest of measure/ needs the bridge
# (driver.cmake).
add_library(opcost_measure STATIC
  ${CMAKE_CURRENT_LIST_DIR}/measure/affinity.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/batch.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/buffer.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/code_pages.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/ceiling.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/attribution.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/scope_kind.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/stop.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/rounds.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/bandwidth_state.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/host_bandwidth.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/budget.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/variant.c)
target_include_directories(opcost_measure PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/measure)
target_compile_options(opcost_measure PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_measure PUBLIC opcost_results opcost_stats
  opcost_shapes opcost_tracers m Threads::Threads rowops_kernels)

# The tests share the C tests' harness (C_EXPECT, c_report in c_samples.c)
# and scratch directory (c_tempdir.c, for test_csv).
foreach(t test_stats test_paired test_rounds test_csv test_ceiling test_affinity test_io test_batch test_host_bandwidth
    test_attribution test_code_pages test_budget)
  add_executable(${t} ${PROJECT_SOURCE_DIR}/tests/c/${t}.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_tempdir.c)
  target_link_libraries(${t} PRIVATE opcost_measure opcost_analysis
    rowops_testref)
  target_compile_options(${t} PRIVATE ${OPCOST_WARNINGS})
  add_test(NAME ${t} COMMAND ${t})
endforeach()
# test_code_pages opens a library of its own directory linked with 4 KiB
# alignment (the last -z max-page-size wins), which must be refused.
add_library(code_pages_4k SHARED ${PROJECT_SOURCE_DIR}/tests/c/code_pages_lib.c)
target_link_options(code_pages_4k PRIVATE LINKER:-z,max-page-size=0x1000)
target_compile_definitions(test_code_pages PRIVATE
  CODE_PAGES_LIB="$<TARGET_FILE:code_pages_4k>")
target_link_libraries(test_code_pages PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_code_pages code_pages_4k)
# the probe's time is not asserted (timing in CI is a benchmark); a hang is
set_tests_properties(test_ceiling PROPERTIES TIMEOUT 600)

# Malformed shape files and results CSVs: every refusal names file:line.
add_executable(test_malformed ${PROJECT_SOURCE_DIR}/tests/c/test_malformed.c
  ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c
  ${PROJECT_SOURCE_DIR}/tests/c/c_tempdir.c)
target_link_libraries(test_malformed PRIVATE opcost_shapes opcost_measure
  rowops_testref)
target_compile_options(test_malformed PRIVATE ${OPCOST_WARNINGS})
add_test(NAME test_malformed COMMAND test_malformed)

# bench/measure/: the engine: plans a run, measures every point in rounds
# against the paired probe, settles and writes the rows. One room in two
# libraries: opcost_measure, its torch-free core (stopping rules, rounds,
# attribution, the plan and budget; what the tests drive with simulated
# members), and, with libtorch, opcost_measure_torch, the part that runs
# the paths through the bench's bridge (driver.cmake builds the bridge).
# Included by the top-level CMakeLists.txt after enable_testing().
find_package(Threads REQUIRED)

add_library(opcost_measure STATIC
  ${CMAKE_CURRENT_LIST_DIR}/measure/affinity.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/batch.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/code_pages.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/attribution.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/scope_kind.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/stop.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/rounds.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/bandwidth_state.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/plan.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/budget.c
  ${CMAKE_CURRENT_LIST_DIR}/measure/variant.c)
target_include_directories(opcost_measure PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/measure)
target_compile_options(opcost_measure PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_measure PUBLIC opcost_ceiling opcost_results
  opcost_stats opcost_shapes opcost_tracers m Threads::Threads
  rowops_kernels)

if(ROWOPS_WITH_TORCH)
  add_library(opcost_measure_torch STATIC
    ${CMAKE_CURRENT_LIST_DIR}/measure/journal.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/timing.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/record_function_tracer.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/attribution_pass.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/hostinfo.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/workload.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/verify.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/point.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/point_rows.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/pipeline.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/model_pilot.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/run_budget.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/probe.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/peer_memory.c
    ${CMAKE_CURRENT_LIST_DIR}/measure/omp_waits.c)
  # the host's description names the source tree's commit (hostinfo.h)
  target_compile_definitions(opcost_measure_torch PRIVATE
    OPCOST_SOURCE_DIR="${CMAKE_SOURCE_DIR}" _POSIX_C_SOURCE=200809L)
  target_compile_options(opcost_measure_torch PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(opcost_measure_torch PUBLIC opcost_measure
    opcost_bridge rowops_testref rowops_kernels rowops_torch)
endif()

# The tests share the C tests' harness (C_EXPECT, c_report in c_samples.c)
# and scratch directory (c_tempdir.c).
foreach(t test_stats test_rounds test_affinity test_batch test_attribution
    test_code_pages test_budget)
  add_executable(${t} ${PROJECT_SOURCE_DIR}/tests/c/${t}.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_tempdir.c)
  target_link_libraries(${t} PRIVATE opcost_measure rowops_testref)
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

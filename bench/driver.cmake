# The opcost driver (build/opcost): C11 over the kernels, the measurement
# and shape libraries, and the bench's own libtorch bridge (bench/bridge/,
# libopcost_bridge.so). The driver's pieces are a library so the tests can
# reach each of them.
if(ROWOPS_WITH_TORCH)
  # The bench's instruments into libtorch (routes, tracer, AOTI loader, CUDA
  # timer): the bench's own library, so librowops_torch.so ships the op
  # alone. It reaches the op through the dispatcher, as any C++ caller does.
  add_library(opcost_bridge SHARED bench/bridge/bridge.cpp
    bench/bridge/bridge_aoti.cpp bench/bridge/bridge_trace.cpp
    bench/bridge/bridge_cuda.cpp)
  target_include_directories(opcost_bridge PUBLIC bench/bridge
    PRIVATE ops)
  target_link_libraries(opcost_bridge PUBLIC rowops_kernels
    PRIVATE ${OPCOST_SHARED_LIBSTDCXX} rowops_torch ${TORCH_LIBRARIES}
    OpenMP::OpenMP_CXX)
  if(ROWOPS_HAVE_CUDA)
    target_link_libraries(opcost_bridge PRIVATE rowops_cuda_kernels)
    # the paired probe's device copy: one launch for one or two pairs
    add_library(opcost_cuda_probe STATIC bench/bridge/probe_copy.cu)
    target_include_directories(opcost_cuda_probe PUBLIC bench/bridge)
    target_compile_options(opcost_cuda_probe PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings>)
    target_link_libraries(opcost_bridge PRIVATE opcost_cuda_probe)
  endif()
  target_compile_options(opcost_bridge PRIVATE ${OPCOST_WARNINGS})
  add_test(NAME test_shared_libstdcxx_bridge
    COMMAND ${CMAKE_SOURCE_DIR}/scripts/check-shared-libstdcxx.sh
    $<TARGET_FILE:opcost_bridge>)

  # The embedded interpreter: the environment's Python (the one torch is
  # installed in), so the Python paths import the same torch.
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)
  file(GLOB OPCOST_PATH_SOURCES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/bench/paths/*.c)
  # the command line (cli/) and the paths and their variants (paths/);
  # the engine's part that needs the bridge is measure.cmake's, opcost ab's
  # ab.cmake's
  add_library(opcost_bench STATIC
    bench/cli/config.c bench/cli/run.c bench/cli/report.c
    bench/cli/report_model.c bench/cli/report_peers.c
    bench/cli/report_estimate.c bench/cli/console.c
    bench/cli/report_budget.c bench/cli/ab.c
    ${OPCOST_PATH_SOURCES})
  target_include_directories(opcost_bench PUBLIC bench/cli bench/paths)
  # The add calibration's bare loops must vectorize as a compiler would at
  # -O3 (gcc's -O2 cost model leaves the bfloat16 loop scalar).
  set_source_files_properties(bench/paths/add_kernel.c PROPERTIES
    COMPILE_OPTIONS "-fvect-cost-model=dynamic")
  target_compile_definitions(opcost_bench PUBLIC
    OPCOST_SOURCE_DIR="${CMAKE_SOURCE_DIR}" _POSIX_C_SOURCE=200809L
    OPCOST_PYTHON_EXECUTABLE="${Python3_EXECUTABLE}"
    OPCOST_ROWOPS_LIBRARY="$<TARGET_FILE:rowops_torch>"
    OPCOST_BENCH_PYTHON_DIR="${CMAKE_SOURCE_DIR}/bench/python")
  target_compile_options(opcost_bench PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(opcost_bench PUBLIC opcost_ab opcost_measure_torch
    opcost_measure opcost_analysis opcost_shapes
    opcost_tracers rowops_testref rowops_kernels opcost_bridge rowops_torch
    Python3::Python)

  add_executable(opcost bench/cli/main.c)
  target_compile_options(opcost PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(opcost PRIVATE opcost_bench)

  # Each path's verification (and that a wrong output is caught), the
  # attribution, and a --quick run whose CSV passes the schema check.
  foreach(t test_paths test_framework_paths test_compare
      test_attribution_paths test_journal test_point_rows test_ab_verdicts)
    add_executable(${t} tests/c/${t}.c tests/c/c_samples.c
      tests/c/c_tempdir.c)
    target_link_libraries(${t} PRIVATE opcost_bench)
    target_compile_options(${t} PRIVATE ${OPCOST_WARNINGS})
    add_test(NAME ${t} COMMAND ${t})
  endforeach()
  # opcost plot: every kind drawn headless from synthetic runs, the plotted
  # points read back from gnuplot's table output (exit 77 = skip: no gnuplot).
  add_executable(test_plot tests/c/test_plot.c tests/c/c_samples.c
    tests/c/c_tempdir.c)
  target_link_libraries(test_plot PRIVATE opcost_bench)
  target_compile_options(test_plot PRIVATE ${OPCOST_WARNINGS})
  add_test(NAME test_plot COMMAND test_plot)
  set_tests_properties(test_plot PROPERTIES SKIP_RETURN_CODE 77)

  # opcost run creates no directory for its output (docs/reliability.md)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/quick)
  # one thread: beside the other tests under ctest -j two threads of a
  # parallel region wait for each other's turn on the cores (22 s alone,
  # 190 s beside them); unpinned, as every test's one-thread run would
  # otherwise take CPU 0
  add_test(NAME opcost_quick_run
    COMMAND opcost run --quick --llc-mib 32 --threads 1 --no-pin
      --out ${CMAKE_BINARY_DIR}/quick/quick.csv)
  set_tests_properties(opcost_quick_run PROPERTIES FIXTURES_SETUP quick_csv)
  add_test(NAME opcost_quick_csv_schema
    COMMAND opcost check --require-ok --allow-wrong compiled-python-decomposed
      ${CMAKE_BINARY_DIR}/quick/quick.csv)
  set_tests_properties(opcost_quick_csv_schema PROPERTIES
    FIXTURES_REQUIRED quick_csv)
  # opcost targets on the quick run: every expected-cost ratio computed
  # (numbers, not nan), and a bad option refused with its name and rule.
  add_test(NAME opcost_targets
    COMMAND opcost targets --distribution edges
      ${CMAKE_BINARY_DIR}/quick/quick.csv)
  set_tests_properties(opcost_targets PROPERTIES FIXTURES_REQUIRED quick_csv
    PASS_REGULAR_EXPRESSION
      "\\| all \\| [0-9.]+ / [0-9.]+ = [0-9.]+ \\((met|\\*\\*missed\\*\\*)\\) \\| [0-9.]+ / [0-9.]+ = [0-9.]+ \\((met|\\*\\*missed\\*\\*)\\) \\| [0-9.]+ / [0-9.]+ = [0-9.]+")
  add_test(NAME opcost_targets_bad_option
    COMMAND opcost targets --llc-mib x ${CMAKE_BINARY_DIR}/quick/quick.csv)
  set_tests_properties(opcost_targets_bad_option PROPERTIES
    PASS_REGULAR_EXPRESSION "--llc-mib: must be a number > 0, got 'x'")
  add_test(NAME opcost_run_noise
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/run_noise.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR}/quick/quick.csv ${CMAKE_BINARY_DIR})
  set_tests_properties(opcost_run_noise PROPERTIES FIXTURES_REQUIRED quick_csv)
  add_test(NAME opcost_interrupted_run
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/interrupt.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  # opcost ab of this build against itself (the file, not its timing),
  # and what it refuses; make nightly's script on pairs in a scratch
  # history
  add_test(NAME opcost_ab
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/ab.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  # opcost ab under faults: a hung or stopped worker, an interrupt, the
  # loader's environment, two sides of one library, a truncated library
  add_test(NAME opcost_ab_faults
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/ab_faults.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  # opcost ab's results under faults (a wrong base, SIGINTs, two runs
  # with one --out, compare of ab files): no verdict that looks real
  add_test(NAME opcost_ab_results
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/ab_results.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  add_test(NAME opcost_nightly_on_pairs
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/nightly.sh ${CMAKE_SOURCE_DIR}
      ${CMAKE_BINARY_DIR})
  set_tests_properties(opcost_nightly_on_pairs PROPERTIES SKIP_RETURN_CODE 77)
  # the model paths on a tiny Llama (transformers): rows, verification,
  # pairing, the compiler's evidence, the console's model section
  add_test(NAME opcost_model_paths
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/model_paths.sh $<TARGET_FILE:opcost>
      ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})

  # --time-budget 60 on a small set: kept within the run's own margin,
  # every row there, every cut said
  add_test(NAME opcost_time_budget
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/time_budget.sh $<TARGET_FILE:opcost>
      ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  # the peer paths with a stand-in peer (right, wrong, missing, failed
  # set-up) and, where set-up installed them, the real peers
  add_test(NAME opcost_peers
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/peers.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  add_test(NAME opcost_cli_help
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/cli_help.sh $<TARGET_FILE:opcost>
      ${CMAKE_SOURCE_DIR})
  add_test(NAME opcost_cli_errors
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/cli_errors.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  # The committed runs (schema version 1) keep loading in check, compare,
  # plot and targets.
  add_test(NAME opcost_loads_schema_v1
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/older_results.sh
      $<TARGET_FILE:opcost> ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  # A fraction of peak at reduced bandwidth is shown, not judged.
  add_test(NAME opcost_bandwidth_states
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/bandwidth_states.sh
      $<TARGET_FILE:opcost> ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  add_test(NAME opcost_cuda_refused_without_device
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/cuda_refused.sh $<TARGET_FILE:opcost>
      ${CMAKE_BINARY_DIR})
  set_tests_properties(opcost_cuda_refused_without_device PROPERTIES
    SKIP_RETURN_CODE 77)
  add_test(NAME opcost_refuses_huge_shape
    COMMAND opcost run --shapes ${CMAKE_SOURCE_DIR}/tests/data/huge.csv
      --out ${CMAKE_BINARY_DIR}/huge.csv)
  set_tests_properties(opcost_refuses_huge_shape PROPERTIES
    PASS_REGULAR_EXPRESSION "huge.csv:3: fused_add_rms_norm B = 100000000000, N = 4096 \\(float32\\) needs .* GiB of buffers, more than 80% of the .* GiB available")
  # NVTX ranges of a --quick run through NVTX's tool interface, one path
  # failing: balanced, nested, every path and phase named
  if(OPCOST_HAVE_NVTX)
    add_test(NAME opcost_nvtx_injection
      COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/nvtx_injection.sh
        $<TARGET_FILE:opcost> $<TARGET_FILE:nvtx_inject>
        $<TARGET_FILE:nvtx_check> ${CMAKE_BINARY_DIR})
  endif()
  add_test(NAME opcost_bad_option COMMAND opcost run --threads 0)
  set_tests_properties(opcost_bad_option PROPERTIES
    PASS_REGULAR_EXPRESSION "--threads: must be an integer in 1..1024, got '0'")
  # ctest -j starts the longest first (seconds on a 2-vCPU Zen 5, caches
  # cold): no test asserts a time, so they may share the cores
  set_tests_properties(opcost_model_paths PROPERTIES COST 75)
  set_tests_properties(opcost_time_budget PROPERTIES COST 65)
  set_tests_properties(test_paths PROPERTIES COST 43)
  set_tests_properties(opcost_run_noise PROPERTIES COST 6)
  set_tests_properties(opcost_quick_run PROPERTIES COST 22)
  set_tests_properties(opcost_cli_errors PROPERTIES COST 20)
  set_tests_properties(opcost_ab PROPERTIES COST 19)
  set_tests_properties(opcost_peers PROPERTIES COST 19)
endif()

if(NOT ROWOPS_WITH_TORCH)
  # Without libtorch: an opcost of the analysis commands (check, compare,
  # plot, targets, shapes); run and list say what they need.
  add_executable(opcost bench/cli/main.c)
  target_compile_definitions(opcost PRIVATE OPCOST_NO_TORCH=1
    OPCOST_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  target_compile_options(opcost PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(opcost PRIVATE opcost_analysis opcost_shapes)
  # the committed runs of every schema version check and compare here
  add_test(NAME opcost_analysis_without_torch
    COMMAND ${CMAKE_SOURCE_DIR}/tests/sh/analysis_without_torch.sh
      $<TARGET_FILE:opcost> ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
endif()

# bench/analysis/: what reads results (check, compare, targets, plots); no
# torch, no engine. Builds opcost_analysis (its tests need the driver:
# driver.cmake). Included by the top-level CMakeLists.txt after
# enable_testing().
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

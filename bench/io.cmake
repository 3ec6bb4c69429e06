# bench/io/: the one way the bench writes a file (a fresh temporary beside
# it, renamed over it; never a link followed, never an input overwritten)
# and the one way it reads one (regular files only, bounded). Below
# everything that reads or writes: shapes, results, analysis, the engine.
file(GLOB OPCOST_IO_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/io/*.c)
add_library(opcost_io STATIC ${OPCOST_IO_SOURCES})
target_include_directories(opcost_io PUBLIC ${CMAKE_CURRENT_LIST_DIR}/io)
target_compile_options(opcost_io PRIVATE ${OPCOST_WARNINGS})

# alpa_add_library(NAME SRCS a.cc b.cc DEPS layer1 layer2 [PUBLIC_LIBS ...])
#
# Declares the library of one layer, `alpa_<NAME>`. DEPS names other layers only; listing a layer
# here is the one place a dependency is allowed, so the graph in DESIGN.md can be read off the
# src/*/CMakeLists.txt files. Headers are included as "<layer>/<file>.h" from src/.
function(alpa_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(alpa_${name} STATIC ${ARG_SRCS})
  # Position-independent, so the Python extension module (a shared object) can link the layers.
  set_target_properties(alpa_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(alpa_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  foreach(dep IN LISTS ARG_DEPS)
    target_link_libraries(alpa_${name} PUBLIC alpa_${dep})
  endforeach()
  target_link_libraries(alpa_${name} PUBLIC ${ARG_PUBLIC_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
endfunction()

# alpa_add_test(NAME SRCS a_test.cc DEPS layer...) builds one GoogleTest binary and registers its
# tests with ctest. Test data paths are passed as ALPA_TESTDATA_DIR / ALPA_SHARED_DIR.
function(alpa_add_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  foreach(dep IN LISTS ARG_DEPS)
    target_link_libraries(${name} PRIVATE alpa_${dep})
  endforeach()
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    ALPA_TESTDATA_DIR="${PROJECT_SOURCE_DIR}/testdata"
    ALPA_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  # oneDNN's OpenMP threads spin while idle by default, which on a loaded 2-core CI machine
  # made the interpreter several times slower (wresnet-tiny training: 12-21 s, 0.7-2.2 s passive).
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ENVIRONMENT "OMP_WAIT_POLICY=passive")
endfunction()
include(GoogleTest)

# Strata — the C++ and Python bindings (included from CMakeLists.txt, after cmake/Fuzz.cmake).
#
#   include/strata.hpp         header-only C++17 RAII over strata.h, installed beside it
#   examples/cpp/trips.cpp     -> build/trips_cpp; ctest trips_cpp_example compares its output with
#                              examples/cpp/trips.expected (label cpp)
#   Tests/cpp/test_strata_hpp.cpp -> build/test_strata_hpp; ctest test_strata_hpp (label cpp),
#                              memcheck_test_strata_hpp (valgrind), postgres_test_strata_hpp
#                              (labels cpp postgres); both C++ programs under AddressSanitizer +
#                              UndefinedBehaviorSanitizer with `make asan` (asan_test_strata_hpp,
#                              asan_trips_cpp_example, label asan)
#   bindings/python/           the `strata` package (pure ctypes); ctest python_trips runs
#                              bindings/python/tests/test_trips.py against build's libstrata
#                              (label python), postgres_python_trips on PostgreSQL
#                              (labels python postgres)
#
# C++ programs build with -std=c++17 -Wall -Wextra -Werror -pedantic.

set(STRATA_CXX_WARNINGS -Wall -Wextra -Werror -pedantic)

# examples/trips/schema-v4.json -> cpp_trips_schema.h (TRIPS_SCHEMA_V4_JSON).
strata_embed_json("${CMAKE_SOURCE_DIR}/examples/trips/schema-v4.json"
                  "${CMAKE_BINARY_DIR}/examples/cpp_trips_schema.h" TRIPS_SCHEMA_V4_JSON)
add_executable(trips_cpp examples/cpp/trips.cpp)
target_link_libraries(trips_cpp PRIVATE strata::strata)
target_include_directories(trips_cpp PRIVATE "${CMAKE_BINARY_DIR}/examples")
set_target_properties(trips_cpp PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_options(trips_cpp PRIVATE ${STRATA_CXX_WARNINGS})

install(FILES include/strata.hpp DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES docs/migrations.md docs/history.md docs/concurrency.md docs/python.md
        DESTINATION "${CMAKE_INSTALL_DOCDIR}")

if(NOT BUILD_TESTING)
  return()
endif()

# Runs the example on a new store in its test folder and compares what it prints.
set(_strata_cpp_example_run
    "rm -rf \"$2/trips.store\" \"$2/trips.store-wal\" \"$2/trips.store-shm\" && \"$0\" \"$2/trips.store\" | diff -u \"$1\" -")

# ---------------------------------------------------------------------------
# C++
# ---------------------------------------------------------------------------
add_executable(test_strata_hpp Tests/cpp/test_strata_hpp.cpp)
target_link_libraries(test_strata_hpp PRIVATE strata::strata PkgConfig::JSONC)
target_include_directories(test_strata_hpp PRIVATE "${CMAKE_SOURCE_DIR}/Tests/c")
target_compile_definitions(test_strata_hpp PRIVATE _POSIX_C_SOURCE=200809L)
set_target_properties(test_strata_hpp PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
# check.h's json-c prototypes: -pedantic is for the header under test, not json-c's.
target_compile_options(test_strata_hpp PRIVATE -Wall -Wextra -Werror)
strata_add_test(NAME test_strata_hpp COMMAND $<TARGET_FILE:test_strata_hpp> MEMCHECK LABELS cpp)

strata_add_test(NAME trips_cpp_example
  COMMAND sh -c "${_strata_cpp_example_run}" $<TARGET_FILE:trips_cpp>
          "${CMAKE_SOURCE_DIR}/examples/cpp/trips.expected" "${STRATA_TEST_TMP}/trips_cpp_example"
  LABELS cpp)

if(_strata_pg_bindir)
  strata_add_test(NAME postgres_test_strata_hpp
    COMMAND bash "${CMAKE_SOURCE_DIR}/scripts/postgres-test.sh"
            env STRATA_TEST_STORE=postgres $<TARGET_FILE:test_strata_hpp>
    LABELS cpp postgres
    ENVIRONMENT "STRATA_POSTGRES_BINDIR=${_strata_pg_bindir}")
endif()

# ---------------------------------------------------------------------------
# Python: the Debian interpreter first (make deps installs it with setuptools,
# wheel, pip and venv, which the offline `pip install` of the test needs).
# ---------------------------------------------------------------------------
find_program(STRATA_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "The Python 3 running the binding's tests (needs setuptools and wheel)")
find_program(STRATA_PYTHON3 NAMES python3)
if(NOT STRATA_PYTHON3)
  message(STATUS "python3 not found: no python tests (make deps installs it)")
else()
  set(_strata_python_test "${CMAKE_SOURCE_DIR}/bindings/python/tests/test_trips.py")
  set(_strata_python_env "STRATA_LIBRARY=${STRATA_LIBRARY}" "STRATA_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
      "PYTHONDONTWRITEBYTECODE=1")
  strata_add_test(NAME python_trips
    COMMAND "${STRATA_PYTHON3}" "${_strata_python_test}"
    LABELS python TIMEOUT 300
    ENVIRONMENT ${_strata_python_env})
  if(_strata_pg_bindir)
    strata_add_test(NAME postgres_python_trips
      COMMAND bash "${CMAKE_SOURCE_DIR}/scripts/postgres-test.sh"
              env STRATA_TEST_STORE=postgres "${STRATA_PYTHON3}" "${_strata_python_test}" TripsStoryTests
      LABELS python postgres TIMEOUT 300
      ENVIRONMENT ${_strata_python_env} "STRATA_POSTGRES_BINDIR=${_strata_pg_bindir}")
  endif()
endif()

# ---------------------------------------------------------------------------
# The C++ test and example under AddressSanitizer + UndefinedBehaviorSanitizer
# (make asan), against the instrumented library of cmake/Fuzz.cmake, built by
# the toolchain's clang++ (whose sanitizer runtimes match the Swift compiler's).
# ---------------------------------------------------------------------------
if(NOT TARGET strata_asan_tests)
  return()
endif()
find_program(STRATA_SANITIZER_CLANGXX clang++ HINTS "${_strata_swift_bin}" NO_DEFAULT_PATH)
if(NOT STRATA_SANITIZER_CLANGXX)
  message(STATUS "no clang++ beside ${SWIFT_EXECUTABLE}: the C++ test is not built under ASan")
  return()
endif()
set(_strata_asan_cxx
    "${STRATA_SANITIZER_CLANGXX}" -std=c++17 -g -O1 -fno-omit-frame-pointer ${STRATA_CXX_WARNINGS}
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fuse-ld=bfd
    "-I${CMAKE_SOURCE_DIR}/include")
add_custom_command(
  OUTPUT "${STRATA_ASAN_DIR}/test_strata_hpp"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${STRATA_ASAN_DIR}"
  COMMAND ${_strata_asan_cxx} -Wno-pedantic -D_POSIX_C_SOURCE=200809L "-I${CMAKE_SOURCE_DIR}/Tests/c"
          ${_strata_jsonc_cflags} "${CMAKE_SOURCE_DIR}/Tests/cpp/test_strata_hpp.cpp"
          -o "${STRATA_ASAN_DIR}/test_strata_hpp" ${_strata_sanitize_link}
  DEPENDS "${CMAKE_SOURCE_DIR}/Tests/cpp/test_strata_hpp.cpp" "${CMAKE_SOURCE_DIR}/Tests/c/check.h"
          "${CMAKE_SOURCE_DIR}/include/strata.hpp" "${CMAKE_SOURCE_DIR}/include/strata.h"
          "${STRATA_SANITIZE_LIBRARY}"
  COMMENT "clang++ -fsanitize=address,undefined test_strata_hpp"
  VERBATIM)
add_custom_command(
  OUTPUT "${STRATA_ASAN_DIR}/trips_cpp"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${STRATA_ASAN_DIR}"
  COMMAND ${_strata_asan_cxx} "-I${CMAKE_BINARY_DIR}/examples" "${CMAKE_SOURCE_DIR}/examples/cpp/trips.cpp"
          -o "${STRATA_ASAN_DIR}/trips_cpp" ${_strata_sanitize_link}
  DEPENDS "${CMAKE_SOURCE_DIR}/examples/cpp/trips.cpp" "${CMAKE_BINARY_DIR}/examples/cpp_trips_schema.h"
          "${CMAKE_SOURCE_DIR}/include/strata.hpp" "${CMAKE_SOURCE_DIR}/include/strata.h"
          "${STRATA_SANITIZE_LIBRARY}"
  COMMENT "clang++ -fsanitize=address,undefined trips_cpp"
  VERBATIM)
add_custom_target(strata_asan_cpp DEPENDS "${STRATA_ASAN_DIR}/test_strata_hpp" "${STRATA_ASAN_DIR}/trips_cpp")
add_dependencies(strata_asan_tests strata_asan_cpp)

foreach(_name IN ITEMS test_strata_hpp trips_cpp_example)
  set(_dir "${STRATA_TEST_TMP}/asan_${_name}")
  file(MAKE_DIRECTORY "${_dir}")
  if(_name STREQUAL "test_strata_hpp")
    set(_run "exec \"$0\"")
    set(_args "${STRATA_ASAN_DIR}/test_strata_hpp")
  else()
    set(_run "${_strata_cpp_example_run}")
    set(_args "${STRATA_ASAN_DIR}/trips_cpp" "${CMAKE_SOURCE_DIR}/examples/cpp/trips.expected" "${_dir}")
  endif()
  # Skipped (not failed) by a plain `ctest` before `make asan` built it.
  add_test(NAME "asan_${_name}"
    COMMAND sh -c "if [ ! -x \"$0\" ]; then echo \"$0 is not built: run make asan\"; exit 77; fi; ${_run}" ${_args}
    WORKING_DIRECTORY "${_dir}")
  set_tests_properties("asan_${_name}" PROPERTIES
    LABELS asan
    SKIP_RETURN_CODE 77
    ENVIRONMENT "STRATA_TEST_DIR=${_dir};${STRATA_SANITIZER_ENV}"
    TIMEOUT 900)
endforeach()

# Strata — fuzzing and sanitizer builds (included from CMakeLists.txt).
#
# One instrumented build of libstrata.so (AddressSanitizer + libFuzzer's
# coverage instrumentation, its own SwiftPM scratch path build/swift-sanitize)
# serves both:
#
#   target strata_fuzzers     libFuzzer harnesses fuzz/fuzz_*.c -> build/fuzz/
#                             ctest: fuzz_build (builds them) and fuzz_<harness>
#                             (a short run each, STRATA_FUZZ_TEST_SECONDS), label fuzz
#   target strata_asan_tests  the C tests Tests/c/test_*.c built with
#                             -fsanitize=address,undefined -> build/asan/
#                             ctest: asan_<test>, label asan (skipped until built)
#
# Swift on Linux has no -sanitize=undefined: UBSan covers the C side only.
# The harnesses and ASan tests are built by the toolchain's own clang (beside
# `swift`), whose sanitizer runtimes match the Swift compiler's.
# `make fuzz` and `make asan` drive these targets (see the Makefile).
if(NOT BUILD_TESTING)
  return()
endif()

option(STRATA_FUZZ "Register the fuzz and ASan targets and tests (needs the Swift toolchain's clang)" ON)
set(STRATA_FUZZ_TEST_SECONDS 8 CACHE STRING "Seconds each fuzz harness runs under ctest (label fuzz)")
if(NOT STRATA_FUZZ)
  return()
endif()

get_filename_component(_strata_swift_real "${SWIFT_EXECUTABLE}" REALPATH)
get_filename_component(_strata_swift_bin "${_strata_swift_real}" DIRECTORY)
find_program(STRATA_SANITIZER_CLANG clang HINTS "${_strata_swift_bin}" NO_DEFAULT_PATH)
if(NOT STRATA_SANITIZER_CLANG)
  message(STATUS "no clang beside ${SWIFT_EXECUTABLE}: no fuzz or ASan targets")
  return()
endif()

# ---------------------------------------------------------------------------
# The instrumented library: build/sanitize/libstrata.so.0
# ---------------------------------------------------------------------------
set(STRATA_SANITIZE_SCRATCH "${CMAKE_BINARY_DIR}/swift-sanitize")
set(STRATA_SANITIZE_DIR "${CMAKE_BINARY_DIR}/sanitize")
set(STRATA_SANITIZE_LIBRARY "${STRATA_SANITIZE_DIR}/${STRATA_SONAME}")
set(_strata_sanitize_swift_flags
    -Xswiftc -static-stdlib -Xswiftc -g
    -Xswiftc -sanitize=address
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp)
add_custom_command(
  OUTPUT "${STRATA_SANITIZE_LIBRARY}"
  BYPRODUCTS "${STRATA_SANITIZE_DIR}/libstrata.so"
  COMMAND "${SWIFT_EXECUTABLE}" build -c release --product strata ${_strata_sanitize_swift_flags}
          --scratch-path "${STRATA_SANITIZE_SCRATCH}"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${STRATA_SANITIZE_DIR}"
  COMMAND "${CMAKE_COMMAND}" -E copy "${STRATA_SANITIZE_SCRATCH}/release/libstrata.so" "${STRATA_SANITIZE_LIBRARY}"
  COMMAND "${CMAKE_COMMAND}" -E touch "${STRATA_SANITIZE_LIBRARY}"
  COMMAND "${CMAKE_COMMAND}" -E create_symlink "${STRATA_SONAME}" "${STRATA_SANITIZE_DIR}/libstrata.so"
  DEPENDS ${_strata_swift_inputs}
  WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
  COMMENT "swift build (AddressSanitizer + fuzzer coverage) -> ${STRATA_SANITIZE_LIBRARY}"
  USES_TERMINAL
  VERBATIM)
add_custom_target(strata_sanitize_library DEPENDS "${STRATA_SANITIZE_LIBRARY}")

set(_strata_jsonc_cflags "")
foreach(_dir IN LISTS JSONC_INCLUDE_DIRS)
  list(APPEND _strata_jsonc_cflags "-I${_dir}")
endforeach()
set(_strata_sanitize_link
    "-L${STRATA_SANITIZE_DIR}" -lstrata "-Wl,-rpath,${STRATA_SANITIZE_DIR}"
    ${JSONC_LINK_LIBRARIES} -pthread)

# Runtime options shared by fuzz and ASan tests. Leak detection stays on: the
# harnesses free their store at exit, and the C tests free what they open.
set(STRATA_SANITIZER_ENV
    "ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_string_checks=1"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

# ---------------------------------------------------------------------------
# libFuzzer harnesses: build/fuzz/fuzz_<name>
# ---------------------------------------------------------------------------
set(STRATA_FUZZ_DIR "${CMAKE_BINARY_DIR}/fuzz")
file(GLOB _strata_fuzz_sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/fuzz/fuzz_*.c")
set(_strata_fuzzers "")
foreach(_src IN LISTS _strata_fuzz_sources)
  get_filename_component(_name "${_src}" NAME_WE)
  set(_exe "${STRATA_FUZZ_DIR}/${_name}")
  add_custom_command(
    OUTPUT "${_exe}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${STRATA_FUZZ_DIR}"
    COMMAND "${STRATA_SANITIZER_CLANG}" -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror
            -fsanitize=fuzzer,address -fuse-ld=bfd
            "-I${CMAKE_SOURCE_DIR}/include" ${_strata_jsonc_cflags}
            "-DFUZZ_SOURCE_DIR=\"${CMAKE_SOURCE_DIR}\""
            "${_src}" -o "${_exe}" ${_strata_sanitize_link} -lsqlite3
    DEPENDS "${_src}" "${CMAKE_SOURCE_DIR}/fuzz/fuzz_common.h" "${CMAKE_SOURCE_DIR}/include/strata.h"
            "${CMAKE_SOURCE_DIR}/Tests/c/hostile_fixture.h"
            "${STRATA_SANITIZE_LIBRARY}"
    COMMENT "clang -fsanitize=fuzzer,address ${_name}"
    VERBATIM)
  list(APPEND _strata_fuzzers "${_exe}")

  # A short run: the seed corpus fuzz/corpus/<harness> (read only), a working
  # corpus under build/fuzz/corpus/ that libFuzzer adds to, and the tokens of
  # fuzz/strata.dict.
  string(REGEX REPLACE "^fuzz_" "" _short "${_name}")
  set(_work "${STRATA_FUZZ_DIR}/corpus/${_short}")
  file(MAKE_DIRECTORY "${_work}" "${STRATA_FUZZ_DIR}/artifacts")
  add_test(NAME "${_name}"
    COMMAND "${_exe}" "-max_total_time=${STRATA_FUZZ_TEST_SECONDS}" -timeout=30 -print_final_stats=1
            "-dict=${CMAKE_SOURCE_DIR}/fuzz/strata.dict" "-artifact_prefix=${STRATA_FUZZ_DIR}/artifacts/${_short}-"
            "${_work}" "${CMAKE_SOURCE_DIR}/fuzz/corpus/${_short}"
    WORKING_DIRECTORY "${STRATA_FUZZ_DIR}")
  set_tests_properties("${_name}" PROPERTIES
    LABELS fuzz
    FIXTURES_REQUIRED strata_fuzzers
    ENVIRONMENT "${STRATA_SANITIZER_ENV}"
    TIMEOUT 300)
endforeach()
add_custom_target(strata_fuzzers DEPENDS ${_strata_fuzzers})

# Under ctest the harnesses are built by a setup test, so `make build` stays
# as fast as it was and only `make test` pays for the instrumented build.
add_test(NAME fuzz_build
  COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target strata_fuzzers)
set_tests_properties(fuzz_build PROPERTIES
  LABELS fuzz FIXTURES_SETUP strata_fuzzers TIMEOUT 3600)

# ---------------------------------------------------------------------------
# The C tests under AddressSanitizer + UndefinedBehaviorSanitizer: build/asan/
# ---------------------------------------------------------------------------
set(STRATA_ASAN_DIR "${CMAKE_BINARY_DIR}/asan")
file(GLOB _strata_asan_test_sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/Tests/c/test_*.c")
set(_strata_asan_tests "")
foreach(_src IN LISTS _strata_asan_test_sources)
  get_filename_component(_stem "${_src}" NAME_WE)
  set(_exe "${STRATA_ASAN_DIR}/${_stem}")
  add_custom_command(
    OUTPUT "${_exe}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${STRATA_ASAN_DIR}"
    COMMAND "${STRATA_SANITIZER_CLANG}" -std=c99 -g -O1 -fno-omit-frame-pointer -Wall -Wextra
            -Wno-string-concatenation
            -fsanitize=address,undefined -fno-sanitize-recover=undefined -fuse-ld=bfd
            -D_POSIX_C_SOURCE=200809L "-DSTRATA_SOURCE_DIR=\"${CMAKE_SOURCE_DIR}\""
            "-I${CMAKE_SOURCE_DIR}/include" "-I${CMAKE_SOURCE_DIR}/Tests/c" ${_strata_jsonc_cflags}
            "${_src}" -o "${_exe}" ${_strata_sanitize_link}
    DEPENDS "${_src}" "${CMAKE_SOURCE_DIR}/Tests/c/check.h" "${CMAKE_SOURCE_DIR}/include/strata.h"
            "${STRATA_SANITIZE_LIBRARY}"
    COMMENT "clang -fsanitize=address,undefined ${_stem}"
    VERBATIM)
  list(APPEND _strata_asan_tests "${_exe}")

  set(_dir "${STRATA_TEST_TMP}/asan_${_stem}")
  file(MAKE_DIRECTORY "${_dir}")
  # Skipped (not failed) by a plain `ctest` before `make asan` built it.
  add_test(NAME "asan_${_stem}"
    COMMAND sh -c "if [ ! -x \"$0\" ]; then echo \"$0 is not built: run make asan\"; exit 77; fi; exec \"$0\"" "${_exe}"
    WORKING_DIRECTORY "${_dir}")
  set_tests_properties("asan_${_stem}" PROPERTIES
    LABELS asan
    SKIP_RETURN_CODE 77
    ENVIRONMENT "STRATA_TEST_DIR=${_dir};${STRATA_SANITIZER_ENV}"
    TIMEOUT 900)
  # The PostgreSQL store's C tests under the sanitizers too (a throw-away cluster each).
  if(_strata_pg_bindir AND _stem IN_LIST STRATA_POSTGRES_TESTS)
    set(_pdir "${STRATA_TEST_TMP}/asan_postgres_${_stem}")
    file(MAKE_DIRECTORY "${_pdir}")
    add_test(NAME "asan_postgres_${_stem}"
      COMMAND sh -c "if [ ! -x \"$1\" ]; then echo \"$1 is not built: run make asan\"; exit 77; fi; exec bash \"$0\" env STRATA_TEST_STORE=postgres \"$1\""
              "${CMAKE_SOURCE_DIR}/scripts/postgres-test.sh" "${_exe}"
      WORKING_DIRECTORY "${_pdir}")
    set_tests_properties("asan_postgres_${_stem}" PROPERTIES
      LABELS "asan;postgres"
      SKIP_RETURN_CODE 77
      ENVIRONMENT "STRATA_TEST_DIR=${_pdir};STRATA_POSTGRES_BINDIR=${_strata_pg_bindir};${STRATA_SANITIZER_ENV}"
      TIMEOUT 900)
  endif()
endforeach()
add_custom_target(strata_asan_tests DEPENDS ${_strata_asan_tests})

# Installs the SDK from BUILD_DIR into a scratch prefix and checks what a
# user gets there.  Run by CTest as `install_consumer`.
#   0. only the public API is installed: include/uncore-sdk/uncore/*.h, no
#      sdk/ header, and each public header compiles on its own (C++20; the
#      C headers also as C89, with and without LIKWID_PERFMON);
#   1. a C++ consumer with find_package(UncoreSDK) builds and runs;
#   2. the same consumer with pkg-config (plus -std=c++20) builds and runs;
#   3. a C consumer builds and links with `pkg-config --cflags --libs` alone,
#      and a C++ one that only has regions gets the UNCORE_EVENTS session;
#   4. the installed `uncore` tool runs.
file(REMOVE_RECURSE ${WORK_DIR})
set(PREFIX ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})

find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
find_program(CC NAMES cc gcc REQUIRED)
if(NOT LIBDIR)
  set(LIBDIR lib)  # CMAKE_INSTALL_LIBDIR of the build, passed by CTest
endif()
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
function(pkg_config out)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} uncore-sdk
                  RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} uncore-sdk failed: ${err}")
  endif()
  message(STATUS "pkg-config ${ARGN} uncore-sdk: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
pkg_config(CFLAGS --cflags)
pkg_config(LIBS --libs)
pkg_config(ALL --cflags --libs)

# 0. The public API, alone.
set(INCLUDE_ROOT ${PREFIX}/include/uncore-sdk)
if(EXISTS ${INCLUDE_ROOT}/sdk)
  message(FATAL_ERROR "sdk/ headers are installed: ${INCLUDE_ROOT}/sdk")
endif()
foreach(flag IN LISTS CFLAGS)
  if(NOT flag MATCHES "^-I" AND NOT flag STREQUAL "-DNOMINMAX")
    message(FATAL_ERROR "pkg-config --cflags carries '${flag}': only -I "
                        "(and Abseil's own flags) belong there")
  endif()
endforeach()
file(GLOB headers RELATIVE ${INCLUDE_ROOT}/uncore ${INCLUDE_ROOT}/uncore/*.h)
if(NOT headers)
  message(FATAL_ERROR "no public header under ${INCLUDE_ROOT}/uncore")
endif()
set(strict -Wall -Wextra -Wpedantic -Werror)
foreach(header IN LISTS headers)
  file(STRINGS ${INCLUDE_ROOT}/uncore/${header} sdk_includes
       REGEX "#include +[\"<]sdk/")
  if(sdk_includes)
    message(FATAL_ERROR "uncore/${header} includes an sdk/ header: "
                        "${sdk_includes}")
  endif()
  set(tu ${WORK_DIR}/headers/${header}.cc)
  file(WRITE ${tu} "#include <uncore/${header}>\n")
  run(${CXX} -std=c++20 ${strict} ${CFLAGS} -c ${tu}
      -o ${WORK_DIR}/headers/${header}.o)
endforeach()
foreach(header uncore_c.h likwid_marker.h)
  set(tu ${WORK_DIR}/headers/${header}.c)
  file(WRITE ${tu} "#include <uncore/${header}>\nint main(void) { return 0; }\n")
  run(${CC} -std=c89 -pedantic-errors ${strict} ${CFLAGS} -c ${tu}
      -o ${WORK_DIR}/headers/${header}.c.o)
  run(${CC} -std=c89 -pedantic-errors ${strict} -DLIKWID_PERFMON ${CFLAGS}
      -c ${tu} -o ${WORK_DIR}/headers/${header}.perfmon.o)
endforeach()

# 1. CMake package.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
    -B ${WORK_DIR}/cmake-consumer -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-consumer)
run(${WORK_DIR}/cmake-consumer/consumer)

# 2. pkg-config, C++: the standard is the consumer's to choose.
run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/install/consumer/main.cc ${ALL}
    -o ${WORK_DIR}/pkg-consumer)
run(${WORK_DIR}/pkg-consumer)

# 3. pkg-config, C: `cc prog.c $(pkg-config --cflags --libs uncore-sdk)`.
run(${CC} ${SOURCE_DIR}/tests/install/consumer/c_consumer.c ${ALL}
    -o ${WORK_DIR}/c-consumer)
set(ENV{UNCORE_EVENTS} "imc[0]/CAS_COUNT.RD")
set(ENV{UNCORE_BACKEND} "sim")
run(${WORK_DIR}/c-consumer)
# A C++ program that only annotates regions gets the UNCORE_EVENTS session
# in a static link only through the .pc's linker anchor.
run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/install/consumer/env_consumer.cc
    ${ALL} -o ${WORK_DIR}/env-consumer)
run(${WORK_DIR}/env-consumer)
unset(ENV{UNCORE_EVENTS})
unset(ENV{UNCORE_BACKEND})

# 4. The installed tool.
execute_process(COMMAND ${PREFIX}/bin/uncore list imc RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "CAS_COUNT")
  message(FATAL_ERROR "installed `uncore list imc` failed (${rc}):\n"
                      "${out}${err}")
endif()
message(STATUS "installed uncore list imc: ok")

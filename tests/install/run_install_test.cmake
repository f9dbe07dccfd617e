# Installs the SDK from BUILD_DIR into a scratch prefix and checks what a
# user gets there.  Run by CTest as `install_consumer`.
#   0. only the public API is installed: include/uncore-sdk/uncore/*.h, no
#      sdk/ header, and each public header compiles on its own (C++20; the
#      C headers also as C89, with and without LIKWID_PERFMON); both
#      libraries are there, the shared one with its versioned SONAME and
#      exporting the public API only (check_exports.cmake);
#   1. C++ consumers with find_package(UncoreSDK) build and run: uncore::sdk
#      links the shared library, uncore::sdk_static the static one, and a
#      program that only has regions gets the UNCORE_EVENTS session both
#      ways;
#   2. the same consumer with pkg-config (plus -std=c++20) builds and runs,
#      from uncore-sdk (shared) and uncore-sdk-static;
#   3. a C consumer builds and links with `pkg-config --cflags --libs` alone,
#      and a C++ one that only has regions gets the UNCORE_EVENTS session,
#      each from both .pc files;
#   4. the installed `uncore` tool runs (it links the static library).
# A program linked to the shared library finds it at run time as a user's
# would: CMake's build RPATH, -Wl,-rpath from the .pc's libdir, or
# LD_LIBRARY_PATH.
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
# pkg_config(OUT PACKAGE ARGS...): the flags `pkg-config ARGS PACKAGE`
# prints, as a list.
function(pkg_config out package)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} ${package}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} ${package} failed: ${err}")
  endif()
  message(STATUS "pkg-config ${ARGN} ${package}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
pkg_config(CFLAGS uncore-sdk --cflags)
pkg_config(ALL uncore-sdk --cflags --libs)
pkg_config(STATIC_ALL uncore-sdk-static --cflags --libs)
pkg_config(SDK_LIBDIR uncore-sdk --variable=libdir)

# expect_linked(PROGRAM shared|static): whether PROGRAM needs
# libuncore_sdk.so at run time.
find_program(READELF readelf REQUIRED)
function(expect_linked program how)
  execute_process(COMMAND ${READELF} -d ${program} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE dynamic ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${program} failed: ${err}")
  endif()
  if(dynamic MATCHES "NEEDED[^\n]*libuncore_sdk\\.so")
    set(found shared)
  else()
    set(found static)
  endif()
  if(NOT found STREQUAL how)
    message(FATAL_ERROR "${program} links the SDK ${found}, expected ${how}:"
                        "\n${dynamic}")
  endif()
endfunction()

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

# The libraries: libuncore_sdk.so -> .so.MAJOR.MINOR (the SONAME) ->
# .so.MAJOR.MINOR.PATCH, and libuncore_sdk.a; the .so exports the public
# API only.
set(LIB_DIR ${PREFIX}/${LIBDIR})
foreach(file libuncore_sdk.a libuncore_sdk.so libuncore_sdk.so.${SDK_SOVERSION}
             libuncore_sdk.so.${SDK_VERSION})
  if(NOT EXISTS ${LIB_DIR}/${file})
    message(FATAL_ERROR "${LIB_DIR}/${file} is not installed")
  endif()
endforeach()
execute_process(COMMAND ${READELF} -d ${LIB_DIR}/libuncore_sdk.so
                OUTPUT_VARIABLE dynamic)
if(NOT dynamic MATCHES "SONAME[^\n]*\\[libuncore_sdk\\.so\\.${SDK_SOVERSION}\\]")
  message(FATAL_ERROR "libuncore_sdk.so has no SONAME libuncore_sdk.so."
                      "${SDK_SOVERSION}:\n${dynamic}")
endif()
run(${CMAKE_COMMAND} -DLIBRARY=${LIB_DIR}/libuncore_sdk.so
    -P ${SOURCE_DIR}/tests/install/check_exports.cmake)

set(ENV_EVENTS "imc[0]/CAS_COUNT.RD")

# 1. CMake package: uncore::sdk (shared) and uncore::sdk_static.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
    -B ${WORK_DIR}/cmake-consumer -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-consumer)
set(built ${WORK_DIR}/cmake-consumer)
expect_linked(${built}/consumer shared)
expect_linked(${built}/env_consumer shared)
expect_linked(${built}/consumer_static static)
expect_linked(${built}/env_consumer_static static)
run(${built}/consumer)
run(${built}/consumer_static)
# A C++ program that only annotates regions gets the UNCORE_EVENTS session:
# the shared library starts it when it loads; a static link keeps it
# through the linker anchor uncore::sdk_static carries.
set(ENV{UNCORE_EVENTS} "${ENV_EVENTS}")
set(ENV{UNCORE_BACKEND} "sim")
run(${built}/env_consumer)
run(${built}/env_consumer_static)
unset(ENV{UNCORE_EVENTS})
unset(ENV{UNCORE_BACKEND})

# 2. pkg-config, C++: the standard is the consumer's to choose.  The shared
# library is found at run time through an rpath the user adds.
set(rpath -Wl,-rpath,${SDK_LIBDIR})
run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/install/consumer/main.cc ${ALL}
    ${rpath} -o ${WORK_DIR}/pkg-consumer)
expect_linked(${WORK_DIR}/pkg-consumer shared)
run(${WORK_DIR}/pkg-consumer)
run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/install/consumer/main.cc
    ${STATIC_ALL} -o ${WORK_DIR}/pkg-consumer-static)
expect_linked(${WORK_DIR}/pkg-consumer-static static)
run(${WORK_DIR}/pkg-consumer-static)

# 3. pkg-config, C: `cc prog.c $(pkg-config --cflags --libs uncore-sdk)`,
# run with LD_LIBRARY_PATH; and the same from uncore-sdk-static.
run(${CC} ${SOURCE_DIR}/tests/install/consumer/c_consumer.c ${ALL}
    -o ${WORK_DIR}/c-consumer)
expect_linked(${WORK_DIR}/c-consumer shared)
run(${CC} ${SOURCE_DIR}/tests/install/consumer/c_consumer.c ${STATIC_ALL}
    -o ${WORK_DIR}/c-consumer-static)
expect_linked(${WORK_DIR}/c-consumer-static static)
# A C++ program that only annotates regions: the session starts when the
# shared library loads, and in a static link through the .pc's anchor.
run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/install/consumer/env_consumer.cc
    ${ALL} -o ${WORK_DIR}/env-consumer)
run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/install/consumer/env_consumer.cc
    ${STATIC_ALL} -o ${WORK_DIR}/env-consumer-static)
expect_linked(${WORK_DIR}/env-consumer-static static)
set(ENV{UNCORE_EVENTS} "${ENV_EVENTS}")
set(ENV{UNCORE_BACKEND} "sim")
run(${WORK_DIR}/c-consumer-static)
run(${WORK_DIR}/env-consumer-static)
set(ENV{LD_LIBRARY_PATH} "${SDK_LIBDIR}")
run(${WORK_DIR}/c-consumer)
run(${WORK_DIR}/env-consumer)
unset(ENV{LD_LIBRARY_PATH})
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

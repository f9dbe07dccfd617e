# Checks what a libuncore_sdk.so exports: the public API and nothing else
# (cmake/uncore_sdk.map, docs/architecture.md "Linking").  Run by CTest as
# `shared_library_exports` on the build tree's library, and by
# run_install_test.cmake on the installed one.
#   cmake -DLIBRARY=path/to/libuncore_sdk.so -P check_exports.cmake
# Every defined dynamic symbol, demangled, must be
#   - C: uncore_* (uncore_c.h, which likwid_marker.h's macros call, and the
#     environment session's anchor), or
#   - C++: in namespace uncore itself (a public class or function: a capital
#     letter follows "uncore::") or uncore::internal (what region.h's inline
#     code calls).
# No name of a layer's namespace (uncore::registers, uncore::spec, ...), of
# Abseil, fmt or the standard library may be there; and the public API the
# headers declare must be.
if(NOT LIBRARY OR NOT EXISTS "${LIBRARY}")
  message(FATAL_ERROR "check_exports.cmake: no library at '${LIBRARY}'")
endif()
find_program(NM nm REQUIRED)
find_program(CXXFILT c++filt REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only --format=posix ${LIBRARY}
                COMMAND ${CXXFILT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D ${LIBRARY} failed (${rc}): ${err}")
endif()
# posix format: "<name> <type> <value> [<size>]"; the name, demangled, may
# hold spaces: everything before the last two or three fields.
string(REPLACE ";" "\\;" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(names "")
set(bad "")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE " [A-Za-z] [0-9a-f]+( [0-9a-f]+)?$" "" name "${line}")
  list(APPEND names "${name}")
  # The qualified name only: a parameter list may name internal types.  A
  # space before it is a function template's return type ("uncore::X
  # std::f<...>(...)"): no public function is a template, so it is not
  # public either.
  string(REGEX REPLACE "\\(.*$" "" qualified "${name}")
  if(qualified MATCHES " ")
    list(APPEND bad "${name}")
    continue()
  endif()
  if(qualified MATCHES "^uncore_[a-z_]+$")
    continue()
  endif()
  if(qualified MATCHES "^uncore::(internal::)?[A-Z]" OR
     qualified MATCHES "^uncore::internal::")
    continue()
  endif()
  list(APPEND bad "${name}")
endforeach()
list(LENGTH names count)
if(bad)
  list(JOIN bad "\n  " bad_text)
  message(FATAL_ERROR "${LIBRARY} exports ${count} symbols, of which these "
                      "are not public API (cmake/uncore_sdk.map):\n  "
                      "${bad_text}")
endif()
# What the public headers declare, one of each kind.
foreach(expected
    "uncore::Session::Start(uncore::SessionOptions)"
    "uncore::Session::Stop()"
    "uncore::Session::Active()"
    "uncore::internal::g_active_recorder"
    "uncore::internal::BeginRegion(uncore::regions::Recorder*, int)"
    "uncore::InternRegionName(std::basic_string_view<char, std::char_traits<char> >)"
    "uncore_init" "uncore_region_begin" "uncore_region_end" "uncore_finalize"
    "uncore_environment_session_enabled"
    "uncore_environment_session_anchor")
  list(FIND names "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${LIBRARY} does not export ${expected}")
  endif()
endforeach()
message(STATUS "${LIBRARY}: ${count} exported symbols, all public API")

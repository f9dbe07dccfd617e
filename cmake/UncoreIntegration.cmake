# What every library of integrations/ that sits on the shared SDK does
# (docs/architecture.md): included by the top-level CMakeLists.txt.
#
#   uncore_integration_needs_shared_sdk("the LIKWID package libuncore_likwid")
#       A macro: in a static-SDK build, says that WHAT is not built and
#       returns from the calling CMakeLists.txt (a second copy of the SDK in
#       the library would count into sessions the program's own regions
#       never see).
#   uncore_integration_links_sdk(TARGET EXPORT_MAP)
#       Links TARGET to uncore::sdk, exports only what EXPORT_MAP (a linker
#       version script) lists, and asks that every symbol come from a
#       library it links (not with sanitizers: clang leaves their runtime
#       to the executable).
macro(uncore_integration_needs_shared_sdk what)
  get_target_property(uncore_sdk_type uncore_sdk TYPE)
  if(NOT uncore_sdk_type STREQUAL "SHARED_LIBRARY")
    message(STATUS "uncore_sdk is a ${uncore_sdk_type}: ${what} needs the "
                   "shared SDK and is not built")
    return()
  endif()
endmacro()

function(uncore_integration_links_sdk target export_map)
  target_link_libraries(${target} PRIVATE uncore::sdk)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${export_map})
  target_link_options(${target} PRIVATE
                      "LINKER:--version-script=${export_map}")
  if(NOT UNCORE_SANITIZE AND NOT CMAKE_CXX_FLAGS MATCHES "sanitize")
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()

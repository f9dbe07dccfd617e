// likwid_headers_test.cc: likwid_headers_test.c compiled as C++ (C++98 and
// the project's C++20, tests/integrations/likwid/CMakeLists.txt): the
// LIKWID package's headers declare their functions extern "C" and compile
// warning-free there too.
#include "likwid_headers_test.c"

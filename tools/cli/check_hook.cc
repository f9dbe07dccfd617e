// The planted encoding error of `uncore check`'s tests (docs/check.md):
// only a build that defines UNCORE_CHECK_TESTING (the test target
// uncore_check_testing, tests/CMakeLists.txt) honours
// UNCORE_CHECK_TESTING_PLANT=read-umask, which programs the memory read
// event with a wrong unit mask (IvyTown's imc/CAS_COUNT.RD as umask 0x0c,
// the writes) so that check must fail and blame the encoding.  The `uncore`
// that is built and installed compiles this file without the definition:
// it returns every spec unchanged and reads no variable.
#include <cstdlib>
#include <string>
#include <string_view>

namespace uncore::cli {

std::string CheckSpecToProgram(const std::string& spec) {
#if defined(UNCORE_CHECK_TESTING)
  const char* plant = std::getenv("UNCORE_CHECK_TESTING_PLANT");
  if (plant != nullptr && std::string_view(plant) == "read-umask" &&
      spec == "imc/CAS_COUNT.RD") {
    return "imc/CAS_COUNT:umask=0x0c";
  }
#endif
  return spec;
}

}  // namespace uncore::cli

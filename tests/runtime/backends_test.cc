// The platforms the register engine serves (runtime::RegisterPlatforms):
// names, how sim and direct choose one, and that each opens the one engine
// on its simulator.
#include "sdk/runtime/backends.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/engine/register_engine.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/nehalemex/box_descriptors.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::runtime {
namespace {

using ::testing::HasSubstr;

TEST(RegisterPlatformsTest, NamesAndAliasesAgreeWithTheCatalogs) {
  ASSERT_EQ(RegisterPlatforms().size(), 3u);
  EXPECT_EQ(FindRegisterPlatform(""), &RegisterPlatforms()[0]);
  EXPECT_EQ(FindRegisterPlatform("IVBEP")->name, "ivytown");
  EXPECT_EQ(FindRegisterPlatform("xeon7500")->name, "nehalemex");
  EXPECT_EQ(FindRegisterPlatform(" wsmex ")->name, "westmereex");
  EXPECT_EQ(FindRegisterPlatform("sapphirerapids"), nullptr);
  for (const RegisterPlatform& p : RegisterPlatforms()) {
    EXPECT_FALSE(p.title.empty());
    EXPECT_FALSE(p.snapshot_window.empty());
    EXPECT_NE(p.simulate, nullptr);
    EXPECT_NE(p.open_direct, nullptr);
    // `cpus` says what open_direct checks: family_model.
    ASSERT_EQ(p.cpus.size(), 5u) << p.cpus;
    machine::CpuIdentity cpu;
    cpu.vendor = "GenuineIntel";
    cpu.family = std::stoi(std::string(p.cpus.substr(0, 2)), nullptr, 16);
    cpu.model = std::stoi(std::string(p.cpus.substr(3, 2)), nullptr, 16);
    if (p.name == "ivytown") {
      EXPECT_TRUE(cpu.is_ivytown());
      continue;
    }
    ASSERT_TRUE(nehalemex::VariantFromModel(cpu.family, cpu.model).has_value())
        << p.cpus;
    EXPECT_EQ(nehalemex::PlatformName(
                  *nehalemex::VariantFromModel(cpu.family, cpu.model)),
              p.name);
    // The 7500's names are the same in its event tables and register model.
    for (std::string_view alias : common::Split(p.aliases, ' ')) {
      EXPECT_EQ(FindRegisterPlatform(alias), &p) << alias;
      ASSERT_TRUE(nehalemex::FromPlatformName(alias).has_value()) << alias;
      EXPECT_EQ(nehalemex::PlatformName(*nehalemex::FromPlatformName(alias)),
                p.name);
    }
    const perfmon::Platform* tables = spec::FindPlatform(p.name);
    ASSERT_NE(tables, nullptr) << p.name;
    EXPECT_EQ(tables->name, p.name);
  }
}

spec::EventSpec Generic(std::string pmu, std::string event) {
  spec::EventSpec e;
  e.kind = spec::EventSpec::Kind::kGenericPerf;
  e.pmu = std::move(pmu);
  e.perf_terms = {{"event", 0xFF}};
  e.text = std::move(event);
  return e;
}

TEST(RegisterPlatformsTest, EachSimulatorRunsTheOneEngine) {
  for (const RegisterPlatform& p : RegisterPlatforms()) {
    BackendRequest request;
    request.name = "sim";
    request.platform = std::string(p.name);
    request.sim_sockets = 2;
    if (p.name == "ivytown") {
      absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec("ubox/UCLK");
      ASSERT_TRUE(e.ok()) << e.status();
      request.program.events.push_back(*e);
    } else {
      request.program.events.push_back(
          Generic("uncore_wbox", "uncore_wbox/event=0xff/"));
    }
    absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(request));
    ASSERT_TRUE(b.ok()) << p.name << ": " << b.status();
    EXPECT_TRUE(b->backend->simulated());
    ASSERT_EQ(b->warnings.size(), 1u);
    EXPECT_THAT(b->warnings[0], HasSubstr("SIMULATED"));
    auto* engine =
        dynamic_cast<devices::engine::RegisterEngine*>(b->backend->device());
    ASSERT_NE(engine, nullptr) << p.name;
    EXPECT_TRUE(engine->programmed());
    EXPECT_EQ(engine->read_plan().size(), 2u) << p.name;  // one per socket
    devices::Snapshot s(engine->read_plan().size());
    EXPECT_TRUE(engine->TakeSnapshot(&s).ok());
    EXPECT_TRUE(b->backend->Stop().ok());
    EXPECT_FALSE(engine->programmed());
  }
}

TEST(RegisterPlatformsTest, APerfOnlyPlatformHasNoRegisterModel) {
  for (const char* backend : {"sim", "direct"}) {
    BackendRequest request;
    request.name = backend;
    request.platform = "sapphirerapids";
    request.program.events.push_back(
        Generic("uncore_imc", "uncore_imc/event=0x5/"));
    absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(request));
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(common::StatusMessage(b.status()),
                HasSubstr("register model of ivytown, nehalemex, westmereex "
                          "only; platform sapphirerapids is counted through "
                          "perf"));
  }
}

}  // namespace
}  // namespace uncore::runtime

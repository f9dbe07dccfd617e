// Golden addresses (the manual's tables), self-consistency of every box
// descriptor, one test per notes/decisions.md entry, and FindBox.
#include "sdk/platforms/ivytown/model/box_descriptors.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace uncore::ivytown {
namespace {

const BoxDescriptor& Ubox() { return Box(BoxType::kUbox); }
const BoxDescriptor& Cbo() { return Box(BoxType::kCbo); }
const BoxDescriptor& Ha() { return Box(BoxType::kHa); }
const BoxDescriptor& Imc() { return Box(BoxType::kImc); }
const BoxDescriptor& Irp() { return Box(BoxType::kIrp); }
const BoxDescriptor& Pcu() { return Box(BoxType::kPcu); }
const BoxDescriptor& Qpi() { return Box(BoxType::kQpi); }
const BoxDescriptor& R2pcie() { return Box(BoxType::kR2pcie); }
const BoxDescriptor& R3qpi() { return Box(BoxType::kR3qpi); }

// Index of the filter register called `name`, or -1.
int FilterIndex(const BoxDescriptor& box, std::string_view name) {
  for (size_t i = 0; i < box.filters.size(); ++i) {
    if (box.filters[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The field `name`, failing the test when it is absent.
const FieldDescriptor& Field(const BoxDescriptor& box, std::string_view name) {
  const FieldDescriptor* f = box.FindField(name);
  EXPECT_NE(f, nullptr) << box.name << " has no field " << name;
  static const FieldDescriptor kMissing{};
  return f != nullptr ? *f : kMissing;
}

void ExpectBits(const FieldDescriptor& f, int hi, int lo) {
  EXPECT_EQ(f.bits.lo, lo) << f.name;
  EXPECT_EQ(f.bits.width, hi - lo + 1) << f.name;
}

bool IsWholeRegisterAlias(const BoxDescriptor& box, const FieldDescriptor& f) {
  return f.reg == FieldRegister::kFilter && f.filter < box.filters.size() &&
         f.bits.lo == 0 && f.bits.width == box.filters[f.filter].size_bits;
}

// ---------------------------------------------------------------------------
// Box list.

TEST(BoxDescriptorsTest, AllBoxesAreInTypeOrder) {
  std::span<const BoxDescriptor> all = AllBoxes();
  ASSERT_EQ(all.size(), static_cast<size_t>(kNumBoxTypes));
  for (int i = 0; i < kNumBoxTypes; ++i) {
    EXPECT_EQ(static_cast<int>(all[i].type), i);
    EXPECT_EQ(&Box(static_cast<BoxType>(i)), &all[i]);
  }
}

TEST(BoxDescriptorsTest, NamesAndSpaces) {
  const std::vector<std::pair<std::string_view, AccessSpace>> expected = {
      {"ubox", AccessSpace::kMsr}, {"cbo", AccessSpace::kMsr},
      {"ha", AccessSpace::kPci},   {"imc", AccessSpace::kPci},
      {"irp", AccessSpace::kPci},  {"pcu", AccessSpace::kMsr},
      {"qpi", AccessSpace::kPci},  {"r2pcie", AccessSpace::kPci},
      {"r3qpi", AccessSpace::kPci}};
  for (int i = 0; i < kNumBoxTypes; ++i) {
    EXPECT_EQ(AllBoxes()[i].name, expected[i].first);
    EXPECT_EQ(AllBoxes()[i].space, expected[i].second);
  }
  EXPECT_EQ(Cbo().kernel.pmu, "uncore_cbox");
  EXPECT_EQ(Imc().kernel.pmu, "uncore_imc");
  EXPECT_EQ(Ubox().num_instances(), 1);
  EXPECT_EQ(Cbo().num_instances(), 15);
  EXPECT_EQ(Ha().num_instances(), 2);
  EXPECT_EQ(Imc().num_instances(), 8);
  EXPECT_EQ(Irp().num_instances(), 1);
  EXPECT_EQ(Pcu().num_instances(), 1);
  EXPECT_EQ(Qpi().num_instances(), 3);
  EXPECT_EQ(R2pcie().num_instances(), 1);
  EXPECT_EQ(R3qpi().num_instances(), 3);
}

// ---------------------------------------------------------------------------
// Golden addresses.

TEST(BoxDescriptorsTest, CboGoldenAddresses) {
  EXPECT_EQ(Cbo().CounterControlAddress(3, 0), 0x0D70u);
  EXPECT_EQ(Cbo().BoxControlAddress(0), 0x0D04u);
  EXPECT_EQ(
      Cbo().FilterAddress(14, FilterIndex(Cbo(), "Cn_MSR_PMON_BOX_FILTER1")),
      0x0EDAu);
  EXPECT_EQ(Cbo().CounterAddress(14, 3), 0x0ED9u);
  // Table 1-2 (L568-569), every C-Box row.
  for (int n = 0; n < 15; ++n) {
    SCOPED_TRACE(n);
    const uint32_t base = 0x0D00 + 0x20 * n;
    EXPECT_EQ(Cbo().instances[n].name, "CBo" + std::to_string(n));
    EXPECT_EQ(Cbo().BoxControlAddress(n), base + 0x04);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(Cbo().CounterControlAddress(n, i), base + 0x10 + i);
      EXPECT_EQ(Cbo().CounterAddress(n, i), base + 0x16 + i);
    }
    EXPECT_EQ(Cbo().FilterAddress(n, 0), base + 0x14);
    EXPECT_EQ(Cbo().FilterAddress(n, 1), base + 0x1A);
  }
  EXPECT_EQ(Cbo().filters[0].name, "Cn_MSR_PMON_BOX_FILTER");
  EXPECT_EQ(Cbo().counter_width, 44);
  EXPECT_EQ(Cbo().num_counters, 4);
}

TEST(BoxDescriptorsTest, UboxGoldenAddresses) {
  EXPECT_EQ(Ubox().CounterControlAddress(0, 0), 0x0C10u);
  EXPECT_EQ(Ubox().CounterControlAddress(0, 1), 0x0C11u);
  EXPECT_EQ(Ubox().CounterAddress(0, 0), 0x0C16u);
  EXPECT_EQ(Ubox().CounterAddress(0, 1), 0x0C17u);
  EXPECT_EQ(Ubox().BoxStatusAddress(0), 0x0C15u);
  EXPECT_EQ(Ubox().BoxControlAddress(0), std::nullopt);
  EXPECT_EQ(Ubox().num_counters, 2);
  EXPECT_EQ(Ubox().counter_width, 44);
  ASSERT_TRUE(Ubox().fixed_counter.has_value());
  const FixedCounterDescriptor& uclk = *Ubox().fixed_counter;
  EXPECT_EQ(uclk.name, "UCLK");
  EXPECT_EQ(Ubox().RegisterAddress(0, uclk.control_offset), 0x0C08u);
  EXPECT_EQ(Ubox().RegisterAddress(0, uclk.counter_offset), 0x0C09u);
  ExpectBits(Field(Ubox(), "thresh"), 28, 24);
}

TEST(BoxDescriptorsTest, PcuGoldenAddresses) {
  EXPECT_EQ(Pcu().CounterControlAddress(0, 0), 0x0C30u);
  EXPECT_EQ(Pcu().CounterControlAddress(0, 3), 0x0C33u);
  EXPECT_EQ(Pcu().CounterAddress(0, 0), 0x0C36u);
  EXPECT_EQ(Pcu().CounterAddress(0, 3), 0x0C39u);
  EXPECT_EQ(Pcu().FilterAddress(0, 0), 0x0C34u);
  EXPECT_EQ(Pcu().BoxControlAddress(0), 0x0C24u);
  EXPECT_EQ(Pcu().BoxStatusAddress(0), 0x0C35u);
  EXPECT_EQ(Pcu().filters[0].writable_mask, 0xFFFFFFFFu);
  ExpectBits(Field(Pcu(), "filter_band0"), 7, 0);
  ExpectBits(Field(Pcu(), "filter_band3"), 31, 24);
}

TEST(BoxDescriptorsTest, ImcGoldenAddresses) {
  EXPECT_EQ(Imc().CounterControlAddress(0, 0), 0xD8u);
  EXPECT_EQ(Imc().CounterControlAddress(5, 3), 0xE4u);
  EXPECT_EQ(Imc().CounterAddress(0, 0), 0xA0u);
  EXPECT_EQ(Imc().CounterAddress(0, 3), 0xB8u);
  EXPECT_EQ(Imc().BoxControlAddress(0), 0xF4u);
  EXPECT_EQ(Imc().BoxStatusAddress(0), 0xF8u);
  ASSERT_TRUE(Imc().fixed_counter.has_value());
  const FixedCounterDescriptor& dclk = *Imc().fixed_counter;
  EXPECT_EQ(dclk.name, "DCLK");
  EXPECT_EQ(dclk.control_offset, 0xF0u);
  EXPECT_EQ(dclk.counter_offset, 0xD0u);
  EXPECT_EQ(dclk.width, 48);
  EXPECT_EQ(dclk.en.mask(), uint64_t{1} << 22);
  EXPECT_EQ(dclk.ov_en.mask(), uint64_t{1} << 20);
  EXPECT_EQ(dclk.rst.mask(), uint64_t{1} << 19);
  EXPECT_EQ(dclk.control_writable_mask, 0x00580000u);

  const InstanceDescriptor& mc0ch2 = Imc().instances[2];
  EXPECT_EQ(mc0ch2.name, "iMC0 channel 2");
  EXPECT_EQ(mc0ch2.pmon.device, 16);
  EXPECT_EQ(mc0ch2.pmon.function, 0);
  EXPECT_EQ(mc0ch2.pmon.device_id, 0x0EB0);
  const InstanceDescriptor& mc1ch1 = Imc().instances[5];
  EXPECT_EQ(mc1ch1.name, "iMC1 channel 1");
  EXPECT_EQ(mc1ch1.pmon.device, 30);
  EXPECT_EQ(mc1ch1.pmon.function, 5);
  EXPECT_EQ(mc1ch1.pmon.device_id, 0x0EF5);
}

TEST(BoxDescriptorsTest, HaGoldenAddresses) {
  EXPECT_EQ(Ha().instances[0].pmon.device, 14);
  EXPECT_EQ(Ha().instances[0].pmon.function, 1);
  EXPECT_EQ(Ha().instances[0].pmon.device_id, 0x0E30);
  EXPECT_EQ(Ha().instances[1].pmon.device, 28);
  EXPECT_EQ(Ha().instances[1].pmon.function, 1);
  EXPECT_EQ(Ha().instances[1].pmon.device_id, 0x0E38);
  const int addr0 = FilterIndex(Ha(), "HAn_PCI_PMON_BOX_ADDRMATCH0");
  const int addr1 = FilterIndex(Ha(), "HAn_PCI_PMON_BOX_ADDRMATCH1");
  const int opc = FilterIndex(Ha(), "HAn_PCI_PMON_BOX_OPCODEMATCH");
  ASSERT_GE(addr0, 0);
  ASSERT_GE(addr1, 0);
  ASSERT_GE(opc, 0);
  EXPECT_EQ(Ha().FilterAddress(1, addr0), 0x40u);
  EXPECT_EQ(Ha().FilterAddress(1, addr1), 0x44u);
  EXPECT_EQ(Ha().FilterAddress(1, opc), 0x48u);
  EXPECT_EQ(Field(Ha(), "filter_addr_lo").filter, addr0);
  ExpectBits(Field(Ha(), "filter_addr_lo"), 31, 6);
  EXPECT_EQ(Field(Ha(), "filter_addr_hi").filter, addr1);
  ExpectBits(Field(Ha(), "filter_addr_hi"), 13, 0);
  EXPECT_EQ(Field(Ha(), "filter_opc").filter, opc);
  ExpectBits(Field(Ha(), "filter_opc"), 5, 0);
  ExpectBits(Field(Ha(), "q_occ_rst"), 16, 16);
  EXPECT_EQ(Ha().counter_width, 48);
}

TEST(BoxDescriptorsTest, IrpGoldenAddresses) {
  EXPECT_EQ(Irp().CounterAddress(0, 2), 0xB8u);
  const std::vector<uint32_t> counters = {0xA0, 0xB0, 0xB8, 0xC0};
  const std::vector<uint32_t> controls = {0xD8, 0xDC, 0xE0, 0xE4};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Irp().CounterAddress(0, i), counters[i]);
    EXPECT_EQ(Irp().CounterControlAddress(0, i), controls[i]);
  }
  EXPECT_EQ(Irp().instances[0].pmon.device, 5);
  EXPECT_EQ(Irp().instances[0].pmon.function, 6);
  EXPECT_EQ(Irp().instances[0].pmon.device_id, 0x0E39);
  EXPECT_TRUE(Irp().filters.empty());
  EXPECT_EQ(Irp().FindField("ov_en"), nullptr);
}

TEST(BoxDescriptorsTest, QpiGoldenAddresses) {
  const InstanceDescriptor& port2 = Qpi().instances[2];
  EXPECT_EQ(port2.name, "QPI port 2");
  EXPECT_EQ(port2.pmon.device, 24);
  EXPECT_EQ(port2.pmon.function, 2);
  EXPECT_EQ(port2.pmon.device_id, 0x0E3A);
  const int match0 = FilterIndex(Qpi(), "Q_Py_PCI_PMON_PKT_MATCH0");
  ASSERT_GE(match0, 0);
  EXPECT_EQ(Qpi().FilterAddress(2, match0), 0x228u);
  EXPECT_TRUE(Qpi().filters[match0].in_aux_function);
  EXPECT_EQ(
      Qpi().FilterAddress(0, FilterIndex(Qpi(), "Q_Py_PCI_PMON_PKT_MATCH1")),
      0x22Cu);
  EXPECT_EQ(
      Qpi().FilterAddress(0, FilterIndex(Qpi(), "Q_Py_PCI_PMON_PKT_MASK0")),
      0x238u);
  EXPECT_EQ(
      Qpi().FilterAddress(0, FilterIndex(Qpi(), "Q_Py_PCI_PMON_PKT_MASK1")),
      0x23Cu);
  for (const FilterRegisterDescriptor& f : Qpi().filters) {
    EXPECT_TRUE(f.in_aux_function) << f.name;
  }
  EXPECT_EQ(Qpi().instances[0].pmon.device_id, 0x0E32);
  EXPECT_EQ(Qpi().instances[0].aux.device, 8);
  EXPECT_EQ(Qpi().instances[0].aux.function, 6);
  EXPECT_EQ(Qpi().instances[0].aux.device_id, 0x0E86);
  EXPECT_EQ(Qpi().instances[1].pmon.device, 9);
  EXPECT_EQ(Qpi().instances[1].pmon.device_id, 0x0E33);
  EXPECT_EQ(Qpi().instances[1].aux.device, 9);
  EXPECT_EQ(Qpi().instances[1].aux.device_id, 0x0E96);
  // Table 2-134 / 2-133 subfields.
  ExpectBits(Field(Qpi(), "match_rnid4"), 31, 31);
  ExpectBits(Field(Qpi(), "match_dnid"), 17, 13);
  ExpectBits(Field(Qpi(), "match_mc"), 12, 9);
  ExpectBits(Field(Qpi(), "match_opc"), 8, 5);
  ExpectBits(Field(Qpi(), "match_vnw"), 4, 3);
  ExpectBits(Field(Qpi(), "match_rds"), 19, 16);
  ExpectBits(Field(Qpi(), "match_rnid30"), 3, 0);
  EXPECT_EQ(Field(Qpi(), "mask_dnid").filter,
            FilterIndex(Qpi(), "Q_Py_PCI_PMON_PKT_MASK0"));
  EXPECT_EQ(Field(Qpi(), "mask_rds").filter,
            FilterIndex(Qpi(), "Q_Py_PCI_PMON_PKT_MASK1"));
}

TEST(BoxDescriptorsTest, R3qpiGoldenAddresses) {
  const InstanceDescriptor& link2 = R3qpi().instances[2];
  EXPECT_EQ(link2.name, "R3QPI link 2");
  EXPECT_EQ(link2.pmon.device, 18);
  EXPECT_EQ(link2.pmon.function, 5);
  EXPECT_EQ(link2.pmon.device_id, 0x0E3E);
  EXPECT_EQ(R3qpi().num_counters, 3);
  EXPECT_EQ(R3qpi().CounterControlAddress(2, 2), 0xE0u);
  EXPECT_EQ(R3qpi().CounterAddress(2, 2), 0xB0u);
  EXPECT_EQ(R3qpi().instances[0].pmon.device, 19);
  EXPECT_EQ(R3qpi().instances[0].pmon.function, 5);
  EXPECT_EQ(R3qpi().instances[1].pmon.function, 6);
  EXPECT_EQ(R3qpi().counter_width, 44);
}

TEST(BoxDescriptorsTest, R2pcieGoldenAddresses) {
  EXPECT_EQ(R2pcie().instances[0].pmon.device, 19);
  EXPECT_EQ(R2pcie().instances[0].pmon.function, 1);
  EXPECT_EQ(R2pcie().instances[0].pmon.device_id, 0x0E34);
  EXPECT_EQ(R2pcie().CounterControlAddress(0, 3), 0xE4u);
  EXPECT_EQ(R2pcie().CounterAddress(0, 3), 0xB8u);
  EXPECT_EQ(R2pcie().counter_width, 44);
}

TEST(BoxDescriptorsTest, BoxControlLayouts) {
  for (const BoxDescriptor* box :
       {&Cbo(), &Ha(), &Imc(), &Irp(), &Pcu(), &Qpi()}) {
    SCOPED_TRACE(box->name);
    EXPECT_EQ(box->box_control.must_write_one, 0x30000u);
  }
  for (const BoxDescriptor* box : {&R2pcie(), &R3qpi(), &Ubox()}) {
    SCOPED_TRACE(box->name);
    EXPECT_EQ(box->box_control.must_write_one, 0u);
  }
  for (const BoxDescriptor& box : AllBoxes()) {
    if (!box.box_control_offset) continue;
    SCOPED_TRACE(box.name);
    EXPECT_EQ(box.box_control.frz.mask(), uint64_t{1} << 8);
    EXPECT_EQ(box.box_control.rst_ctrs.mask(), uint64_t{1} << 1);
    EXPECT_EQ(box.box_control.rst_ctrl.mask(), uint64_t{1} << 0);
  }
}

TEST(BoxDescriptorsTest, ControlWritableMasks) {
  EXPECT_EQ(Ubox().control_writable_mask, 0x1F56FFFFu);
  EXPECT_EQ(Cbo().control_writable_mask, 0xFF4EFFFFu);
  EXPECT_EQ(Ha().control_writable_mask, 0xFF57FFFFu);
  EXPECT_EQ(Imc().control_writable_mask, 0xFF56FFFFu);
  EXPECT_EQ(Irp().control_writable_mask, 0xFF46FFFFu);
  EXPECT_EQ(Pcu().control_writable_mask, 0xDF76FFFFu);
  EXPECT_EQ(Qpi().control_writable_mask, 0xFF76FFFFu);
  EXPECT_EQ(R2pcie().control_writable_mask, 0xFF56FFFFu);
  EXPECT_EQ(R3qpi().control_writable_mask, 0xFF56FFFFu);
}

// ---------------------------------------------------------------------------
// Field names: exactly the agreed set (notes/field-names.md) per box.

TEST(BoxDescriptorsTest, FieldNamesFollowTheContract) {
  const std::set<std::string> common = {"event", "umask", "rst",
                                        "edge",  "en",    "thresh"};
  auto with = [&](std::set<std::string> extra) {
    extra.insert(common.begin(), common.end());
    return extra;
  };
  const std::set<std::string> qpi_filters = {
      "match0",     "match_rnid4", "match_dnid", "match_mc",     "match_opc",
      "match_vnw",  "match1",      "match_rds",  "match_rnid30", "mask0",
      "mask_rnid4", "mask_dnid",   "mask_mc",    "mask_opc",     "mask_vnw",
      "mask1",      "mask_rds",    "mask_rnid30"};
  std::set<std::string> qpi = with({"ov_en", "ext"});
  qpi.insert(qpi_filters.begin(), qpi_filters.end());
  const std::map<BoxType, std::set<std::string>> expected = {
      {BoxType::kUbox, with({"ov_en"})},
      {BoxType::kCbo,
       with({"tid_en", "filter_tid", "filter_state", "filter_nid", "filter_opc",
             "filter_nc", "filter_isoc"})},
      {BoxType::kHa, with({"q_occ_rst", "ov_en", "filter_addr_lo",
                           "filter_addr_hi", "filter_opc"})},
      {BoxType::kImc, with({"ov_en"})},
      {BoxType::kIrp, with({})},
      {BoxType::kPcu,
       with({"ov_en", "ext", "occ_sel", "occ_invert", "occ_edge",
             "filter_band0", "filter_band1", "filter_band2", "filter_band3"})},
      {BoxType::kQpi, qpi},
      {BoxType::kR2pcie, with({"ov_en"})},
      {BoxType::kR3qpi, with({"ov_en"})},
  };
  for (const BoxDescriptor& box : AllBoxes()) {
    SCOPED_TRACE(box.name);
    std::set<std::string> names;
    for (const FieldDescriptor& f : box.fields) {
      EXPECT_TRUE(names.insert(std::string(f.name)).second)
          << "duplicate " << f.name;
    }
    EXPECT_EQ(names, expected.at(box.type));
  }
}

TEST(BoxDescriptorsTest, FieldUsesAndFlags) {
  const std::set<std::string_view> event = {"event", "umask", "ext"};
  const std::set<std::string_view> engine = {"rst", "en", "ov_en", "q_occ_rst"};
  const std::set<std::string_view> flags = {"edge", "tid_en", "occ_invert",
                                            "occ_edge"};
  for (const BoxDescriptor& box : AllBoxes()) {
    for (const FieldDescriptor& f : box.fields) {
      SCOPED_TRACE(std::string(box.name) + "." + std::string(f.name));
      if (event.contains(f.name)) {
        EXPECT_EQ(f.use, FieldUse::kEvent);
        EXPECT_EQ(f.reg, FieldRegister::kControl);
      } else if (engine.contains(f.name)) {
        EXPECT_EQ(f.use, FieldUse::kEngine);
        EXPECT_EQ(f.reg, FieldRegister::kControl);
      } else {
        EXPECT_EQ(f.use, FieldUse::kModifier);
      }
      EXPECT_EQ(f.is_flag, flags.contains(f.name));
      EXPECT_FALSE(f.manual_name.empty());
    }
  }
  // Common control bits (notes/field-names.md).
  for (const BoxDescriptor& box : AllBoxes()) {
    SCOPED_TRACE(box.name);
    ExpectBits(Field(box, "event"), 7, 0);
    ExpectBits(Field(box, "umask"), 15, 8);
    ExpectBits(Field(box, "rst"), 17, 17);
    ExpectBits(Field(box, "edge"), 18, 18);
    ExpectBits(Field(box, "en"), 22, 22);
    if (const FieldDescriptor* f = box.FindField("ov_en"))
      ExpectBits(*f, 20, 20);
  }
  ExpectBits(Field(Cbo(), "tid_en"), 19, 19);
  ExpectBits(Field(Cbo(), "thresh"), 31, 24);
  ExpectBits(Field(Cbo(), "filter_tid"), 4, 0);
  ExpectBits(Field(Cbo(), "filter_opc"), 28, 20);
  ExpectBits(Field(Cbo(), "filter_nc"), 30, 30);
  ExpectBits(Field(Cbo(), "filter_isoc"), 31, 31);
  EXPECT_EQ(Field(Cbo(), "filter_tid").filter, 0);
  EXPECT_EQ(Field(Cbo(), "filter_opc").filter, 1);
}

// ---------------------------------------------------------------------------
// Self-consistency of every descriptor.

struct Range {
  uint32_t begin;
  uint32_t end;
  std::string what;
};

// Every register of instance `n` in the instance's own space (MSR numbers,
// or offsets in its PMON function); PCI counters are two dwords.
std::vector<Range> Registers(const BoxDescriptor& box, int n) {
  const bool pci = box.space == AccessSpace::kPci;
  const uint32_t reg = pci ? 4 : 1;
  const uint32_t ctr = pci ? 8 : 1;
  std::vector<Range> out;
  for (int i = 0; i < box.num_counters; ++i) {
    const uint32_t c = box.CounterControlAddress(n, i);
    const uint32_t d = box.CounterAddress(n, i);
    out.push_back({c, c + reg, "CTL" + std::to_string(i)});
    out.push_back({d, d + ctr, "CTR" + std::to_string(i)});
  }
  if (auto a = box.BoxControlAddress(n))
    out.push_back({*a, *a + reg, "BOX_CTL"});
  if (auto a = box.BoxStatusAddress(n)) {
    out.push_back({*a, *a + reg, "BOX_STATUS"});
  }
  if (box.fixed_counter) {
    const uint32_t c =
        box.RegisterAddress(n, box.fixed_counter->control_offset);
    const uint32_t d =
        box.RegisterAddress(n, box.fixed_counter->counter_offset);
    out.push_back({c, c + reg, "FIXED_CTL"});
    out.push_back({d, d + ctr, "FIXED_CTR"});
  }
  for (size_t f = 0; f < box.filters.size(); ++f) {
    if (box.filters[f].in_aux_function) continue;
    const uint32_t a = box.FilterAddress(n, static_cast<int>(f));
    out.push_back({a, a + reg, std::string(box.filters[f].name)});
  }
  return out;
}

bool Intersect(const Range& a, const Range& b) {
  return a.begin < b.end && b.begin < a.end;
}

TEST(BoxDescriptorsTest, CountersAndWidths) {
  for (const BoxDescriptor& box : AllBoxes()) {
    SCOPED_TRACE(box.name);
    EXPECT_GE(box.num_counters, 1);
    EXPECT_LE(box.num_counters, kMaxCounters);
    EXPECT_TRUE(box.counter_width == 44 || box.counter_width == 48);
    EXPECT_EQ(box.counter_mask(), (uint64_t{1} << box.counter_width) - 1);
    EXPECT_GE(box.max_increment_per_cycle, 1);
    if (box.fixed_counter) {
      EXPECT_TRUE(box.fixed_counter->width == 44 ||
                  box.fixed_counter->width == 48);
    }
  }
}

TEST(BoxDescriptorsTest, NoTwoRegistersOfAnInstanceShareAnAddress) {
  for (const BoxDescriptor& box : AllBoxes()) {
    for (int n = 0; n < box.num_instances(); ++n) {
      SCOPED_TRACE(std::string(box.instances[n].name));
      const std::vector<Range> regs = Registers(box, n);
      for (size_t i = 0; i < regs.size(); ++i) {
        for (size_t j = i + 1; j < regs.size(); ++j) {
          EXPECT_FALSE(Intersect(regs[i], regs[j]))
              << regs[i].what << " and " << regs[j].what;
        }
      }
      // Aux-function filters: distinct dwords within the aux function.
      std::set<uint32_t> aux;
      for (const FilterRegisterDescriptor& f : box.filters) {
        if (f.in_aux_function) {
          EXPECT_TRUE(aux.insert(f.offset).second) << f.name;
          EXPECT_EQ(f.offset % 4, 0u) << f.name;
        }
      }
    }
  }
}

TEST(BoxDescriptorsTest, MsrAddressesAreDistinctAcrossTheSocket) {
  std::map<uint32_t, std::string> owner = {
      {kGlobal.global_control, "GLOBAL_CTL"},
      {kGlobal.global_status, "GLOBAL_STATUS"},
      {kGlobal.global_config, "GLOBAL_CONFIG"}};
  for (const BoxDescriptor& box : AllBoxes()) {
    if (box.space != AccessSpace::kMsr) continue;
    for (int n = 0; n < box.num_instances(); ++n) {
      for (const Range& r : Registers(box, n)) {
        const std::string what =
            std::string(box.instances[n].name) + " " + r.what;
        auto [it, inserted] = owner.emplace(r.begin, what);
        EXPECT_TRUE(inserted) << what << " collides with " << it->second;
      }
    }
  }
}

TEST(BoxDescriptorsTest, PciFunctionsAreDistinct) {
  std::map<std::pair<int, int>, std::string> owner;
  std::set<uint16_t> ids;
  for (const BoxDescriptor& box : AllBoxes()) {
    if (box.space != AccessSpace::kPci) continue;
    for (const InstanceDescriptor& in : box.instances) {
      SCOPED_TRACE(std::string(in.name));
      EXPECT_EQ(in.msr_base, 0u);
      EXPECT_TRUE(in.pmon.present());
      for (const PciFunction* fn : {&in.pmon, &in.aux}) {
        if (fn->device == 0) continue;  // no aux function
        auto [it, inserted] = owner.emplace(
            std::make_pair(fn->device, fn->function), std::string(in.name));
        EXPECT_TRUE(inserted) << "D" << int{fn->device} << ":F"
                              << int{fn->function} << " also " << it->second;
        if (fn->present()) {
          EXPECT_TRUE(ids.insert(fn->device_id).second)
              << std::hex << fn->device_id;
          EXPECT_EQ(fn->device_id & 0xF000, 0x0000);
          EXPECT_EQ(fn->device_id & 0x0F00, 0x0E00);
        }
      }
    }
  }
}

TEST(BoxDescriptorsTest, MsrInstancesHaveNoPciFunction) {
  for (const BoxDescriptor& box : AllBoxes()) {
    if (box.space != AccessSpace::kMsr) continue;
    for (const InstanceDescriptor& in : box.instances) {
      EXPECT_NE(in.msr_base, 0u) << in.name;
      EXPECT_FALSE(in.pmon.present()) << in.name;
      EXPECT_FALSE(in.aux.present()) << in.name;
    }
  }
}

TEST(BoxDescriptorsTest, FieldsFitTheirRegistersAndDoNotOverlap) {
  for (const BoxDescriptor& box : AllBoxes()) {
    uint64_t control_union = 0;
    std::vector<uint64_t> filter_union(box.filters.size(), 0);
    for (size_t i = 0; i < box.fields.size(); ++i) {
      const FieldDescriptor& f = box.fields[i];
      SCOPED_TRACE(std::string(box.name) + "." + std::string(f.name));
      ASSERT_FALSE(f.bits.empty());
      if (f.is_flag) {
        EXPECT_EQ(f.bits.width, 1);
      }
      if (f.reg == FieldRegister::kControl) {
        EXPECT_LE(f.bits.lo + f.bits.width, 32);
        EXPECT_EQ(f.bits.mask() & ~box.control_writable_mask, 0u);
        control_union |= f.bits.mask();
      } else {
        ASSERT_LT(f.filter, box.filters.size());
        const FilterRegisterDescriptor& reg = box.filters[f.filter];
        EXPECT_LE(f.bits.lo + f.bits.width, reg.size_bits);
        if (!IsWholeRegisterAlias(box, f)) {
          EXPECT_EQ(f.bits.mask() & ~reg.writable_mask, 0u);
          filter_union[f.filter] |= f.bits.mask();
        }
      }
      for (size_t j = i + 1; j < box.fields.size(); ++j) {
        const FieldDescriptor& g = box.fields[j];
        const bool same_register =
            f.reg == g.reg &&
            (f.reg == FieldRegister::kControl || f.filter == g.filter);
        if (!same_register || (f.bits.mask() & g.bits.mask()) == 0) continue;
        const bool alias =
            IsWholeRegisterAlias(box, f) || IsWholeRegisterAlias(box, g);
        const bool occ_sel = box.type == BoxType::kPcu && f.name == "umask" &&
                             g.name == "occ_sel";
        EXPECT_TRUE(alias || occ_sel) << "overlaps " << g.name;
      }
    }
    EXPECT_EQ(box.control_writable_mask, control_union) << box.name;
    for (size_t r = 0; r < box.filters.size(); ++r) {
      EXPECT_EQ(box.filters[r].writable_mask, filter_union[r])
          << box.filters[r].name;
    }
  }
}

TEST(BoxDescriptorsTest, StatusBitsAreConsistent) {
  for (const BoxDescriptor& box : AllBoxes()) {
    SCOPED_TRACE(box.name);
    if (!box.box_status_offset) {
      EXPECT_EQ(box.box_status_writable_mask, 0u);
      continue;
    }
    uint64_t seen = 0;
    for (int i = 0; i < box.num_counters; ++i) {
      const uint64_t bit = uint64_t{1} << box.counter_status_bits[i];
      EXPECT_EQ(seen & bit, 0u) << "counter " << i;
      seen |= bit;
    }
    if (box.fixed_counter &&
        box.fixed_counter->box_status_bit != kNoStatusBit) {
      const uint64_t bit = uint64_t{1} << box.fixed_counter->box_status_bit;
      EXPECT_EQ(seen & bit, 0u) << "fixed counter";
      seen |= bit;
    }
    EXPECT_EQ(seen, box.box_status_writable_mask);
  }
}

TEST(BoxDescriptorsTest, GlobalStatusBitsCoverTable23) {
  // bit -> box type; every ov bit 26:0 belongs to exactly one box type.
  std::map<int, BoxType> owner;
  auto claim = [&](int bit, BoxType type, std::string_view who) {
    if (bit < 0) return;
    EXPECT_LE(bit, 26) << who;
    auto [it, inserted] = owner.emplace(bit, type);
    EXPECT_TRUE(inserted || it->second == type)
        << who << " shares bit " << bit << " with another box type";
  };
  for (const BoxDescriptor& box : AllBoxes()) {
    for (const InstanceDescriptor& in : box.instances) {
      claim(in.global_status_bit, box.type, in.name);
    }
    if (box.fixed_counter) {
      claim(box.fixed_counter->global_status_bit, box.type, box.name);
    }
  }
  EXPECT_EQ(owner.size(), 27u);
  EXPECT_EQ(kGlobal.global_status_writable_mask, 0x07FFFFFFu);
  EXPECT_EQ(Ubox().instances[0].global_status_bit, 1);
  EXPECT_EQ(Pcu().instances[0].global_status_bit, 2);
  EXPECT_EQ(Ha().instances[0].global_status_bit, 18);
  EXPECT_EQ(Ha().instances[1].global_status_bit, 19);
  for (int n = 0; n < 8; ++n) {
    EXPECT_EQ(Imc().instances[n].global_status_bit, n < 4 ? 20 : 21);
  }
  EXPECT_EQ(R2pcie().instances[0].global_status_bit, 26);
  EXPECT_EQ(Imc().fixed_counter->global_status_bit, -1);
}

// ---------------------------------------------------------------------------
// One test per notes/decisions.md entry.

TEST(BoxDescriptorsTest, Decision1CboHasNoBoxStatus) {
  EXPECT_FALSE(Cbo().box_status_offset.has_value());
  EXPECT_EQ(Cbo().BoxStatusAddress(2), std::nullopt);
  EXPECT_EQ(Cbo().box_status_writable_mask, 0u);
  EXPECT_EQ(Cbo().FindField("ov_en"), nullptr);
}

TEST(BoxDescriptorsTest, Decision2CboGlobalStatusBitIsThreePlusN) {
  for (int n = 0; n < Cbo().num_instances(); ++n) {
    EXPECT_EQ(Cbo().instances[n].global_status_bit, 3 + n);
  }
}

TEST(BoxDescriptorsTest, Decision3ImcStatusFixedIsBitZero) {
  EXPECT_EQ(Imc().fixed_counter->box_status_bit, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Imc().counter_status_bits[i], i + 1);
  EXPECT_EQ(Imc().box_status_writable_mask, 0x1Fu);
}

TEST(BoxDescriptorsTest, Decision4UclkIs44Bits) {
  EXPECT_EQ(Ubox().fixed_counter->width, 44);
  EXPECT_EQ(Ubox().fixed_counter->en.mask(), uint64_t{1} << 22);
  EXPECT_EQ(Ubox().fixed_counter->ov_en.mask(), uint64_t{1} << 20);
  EXPECT_TRUE(Ubox().fixed_counter->rst.empty());
  EXPECT_EQ(Ubox().fixed_counter->control_writable_mask, 0x00500000u);
  // #37: 44 in the field table, 48 in the prose and the kernel.
  EXPECT_TRUE(Ubox().fixed_counter->width_disputed);
  EXPECT_FALSE(Imc().fixed_counter->width_disputed);
}

TEST(BoxDescriptorsTest, Decision5UclkOverflowIsGlobalBitZeroOnly) {
  EXPECT_EQ(Ubox().fixed_counter->box_status_bit, kNoStatusBit);
  EXPECT_EQ(Ubox().fixed_counter->global_status_bit, 0);
  EXPECT_EQ(Ubox().box_status_writable_mask, 0x3u);
}

TEST(BoxDescriptorsTest, Decision6IrpIs44Bits) {
  EXPECT_EQ(Irp().counter_width, 44);
  // #37: the only box whose general counters have two widths.
  for (const BoxDescriptor& box : AllBoxes()) {
    EXPECT_EQ(box.counter_width_disputed, box.type == BoxType::kIrp)
        << box.name;
  }
}

TEST(BoxDescriptorsTest, Decision7IrpHasNoGlobalStatusBit) {
  EXPECT_EQ(Irp().instances[0].global_status_bit, -1);
  EXPECT_EQ(Irp().BoxStatusAddress(0), 0xF8u);
  EXPECT_EQ(Irp().box_status_writable_mask, 0xFu);
}

TEST(BoxDescriptorsTest, Decision8Ha1IsDevice28) {
  EXPECT_EQ(Ha().instances[1].pmon.device, 28);
  EXPECT_EQ(Ha().instances[1].pmon.function, 1);
}

TEST(BoxDescriptorsTest, Decision9PcuControlLayout) {
  ExpectBits(Field(Pcu(), "event"), 7, 0);
  ExpectBits(Field(Pcu(), "umask"), 15, 8);
  ExpectBits(Field(Pcu(), "occ_sel"), 15, 14);
  ExpectBits(Field(Pcu(), "ov_en"), 20, 20);
  ExpectBits(Field(Pcu(), "ext"), 21, 21);
  ExpectBits(Field(Pcu(), "thresh"), 28, 24);
  ExpectBits(Field(Pcu(), "occ_invert"), 30, 30);
  ExpectBits(Field(Pcu(), "occ_edge"), 31, 31);
  EXPECT_EQ(Pcu().FindField("inv"), nullptr);
  EXPECT_EQ(Pcu().FindField("occ_edge")->manual_name, "occ_edge_det");
}

TEST(BoxDescriptorsTest, Decision10PcuIs48Bits) {
  EXPECT_EQ(Pcu().counter_width, 48);
}

TEST(BoxDescriptorsTest, Decision11QpiExtIsBit21) {
  ExpectBits(Field(Qpi(), "ext"), 21, 21);
  EXPECT_EQ(Qpi().control_writable_mask & (uint64_t{1} << 16), 0u);
}

TEST(BoxDescriptorsTest, Decision12Bit23IsReservedEverywhere) {
  // Every counter-control field table marks bit 23 "SW must write to 0":
  // no field may cover it and no writable mask may include it.
  for (const BoxDescriptor& box : AllBoxes()) {
    SCOPED_TRACE(box.name);
    EXPECT_EQ(box.FindField("inv"), nullptr);
    EXPECT_EQ(box.control_writable_mask & (uint64_t{1} << 23), 0u);
  }
}

TEST(BoxDescriptorsTest, Decision13QpiGlobalStatusBits) {
  EXPECT_EQ(Qpi().instances[0].global_status_bit, 22);
  EXPECT_EQ(Qpi().instances[1].global_status_bit, 22);
  EXPECT_EQ(Qpi().instances[2].global_status_bit, 23);
}

TEST(BoxDescriptorsTest, Decision14QpiPort2MaskMatchIdUnknown) {
  const PciFunction& aux = Qpi().instances[2].aux;
  EXPECT_EQ(aux.device, 24);
  EXPECT_EQ(aux.function, 6);
  EXPECT_EQ(aux.device_id, 0);
  EXPECT_FALSE(aux.present());
  EXPECT_TRUE(Qpi().instances[0].aux.present());
  EXPECT_TRUE(Qpi().instances[1].aux.present());
}

TEST(BoxDescriptorsTest, Decision15Offset228IsMatch0) {
  EXPECT_EQ(Qpi().filters[Field(Qpi(), "match0").filter].offset, 0x228u);
  EXPECT_EQ(Qpi().filters[Field(Qpi(), "mask0").filter].offset, 0x238u);
}

TEST(BoxDescriptorsTest, Decision16R3qpiHasThreeLinks) {
  ASSERT_EQ(R3qpi().num_instances(), 3);
  EXPECT_EQ(R3qpi().instances[0].global_status_bit, 24);
  EXPECT_EQ(R3qpi().instances[1].global_status_bit, 24);
  EXPECT_EQ(R3qpi().instances[2].global_status_bit, 25);
}

TEST(BoxDescriptorsTest, Decision17ImcChannelFunctions) {
  const int functions[4] = {4, 5, 0, 1};
  for (int n = 0; n < 8; ++n) {
    const PciFunction& fn = Imc().instances[n].pmon;
    SCOPED_TRACE(std::string(Imc().instances[n].name));
    EXPECT_EQ(fn.device, n < 4 ? 16 : 30);
    EXPECT_EQ(fn.function, functions[n % 4]);
    EXPECT_EQ(fn.device_id, (n < 4 ? 0x0EB0 : 0x0EF0) + functions[n % 4]);
    EXPECT_EQ(Imc().instances[n].name, "iMC" + std::to_string(n / 4) +
                                           " channel " + std::to_string(n % 4));
  }
}

TEST(BoxDescriptorsTest, Decision18CboStateIs22To17) {
  ExpectBits(Field(Cbo(), "filter_state"), 22, 17);
  EXPECT_EQ(Cbo().filters[0].writable_mask, 0x007E001Fu);
}

TEST(BoxDescriptorsTest, Decision19CboNidIs15To0) {
  ExpectBits(Field(Cbo(), "filter_nid"), 15, 0);
  EXPECT_EQ(Cbo().filters[1].writable_mask, 0xDFF0FFFFu);
}

TEST(BoxDescriptorsTest, Decision20MaxIncrementPerCycle) {
  EXPECT_EQ(Ubox().max_increment_per_cycle, 1);
  EXPECT_EQ(Cbo().max_increment_per_cycle, 20);
  EXPECT_EQ(Ha().max_increment_per_cycle, 512);
  EXPECT_EQ(Imc().max_increment_per_cycle, 255);
  EXPECT_EQ(Irp().max_increment_per_cycle, 255);
  EXPECT_EQ(Pcu().max_increment_per_cycle, 15);
  EXPECT_EQ(Qpi().max_increment_per_cycle, 255);
  EXPECT_EQ(R2pcie().max_increment_per_cycle, 31);
  EXPECT_EQ(R3qpi().max_increment_per_cycle, 255);
}

TEST(BoxDescriptorsTest, Decision21OnlyDocumentedOverlaps) {
  for (std::string_view alias : {"match0", "match1", "mask0", "mask1"}) {
    const FieldDescriptor& f = Field(Qpi(), alias);
    EXPECT_TRUE(IsWholeRegisterAlias(Qpi(), f)) << alias;
    EXPECT_NE(Qpi().filters[f.filter].writable_mask, 0xFFFFFFFFu) << alias;
  }
  EXPECT_EQ(Qpi().filters[Field(Qpi(), "match0").filter].writable_mask,
            0x8003FFF8u);
  EXPECT_EQ(Qpi().filters[Field(Qpi(), "match1").filter].writable_mask,
            0x000F000Fu);
  // POWER_STATE_OCCUPANCY.CORES_C3 (umask 0x80) is occ_sel = 2.
  const FieldDescriptor& umask = Field(Pcu(), "umask");
  const FieldDescriptor& occ_sel = Field(Pcu(), "occ_sel");
  EXPECT_EQ(occ_sel.bits.Extract(umask.bits.Insert(0, 0x80)), 2u);
}

// ---------------------------------------------------------------------------
// FindBox.

TEST(BoxDescriptorsTest, FindBoxByNameAliasAndCase) {
  const std::vector<std::pair<std::string_view, BoxType>> cases = {
      {"ubox", BoxType::kUbox},
      {"uncore_ubox", BoxType::kUbox},
      {"u", BoxType::kUbox},
      {"cbo", BoxType::kCbo},
      {"cbox", BoxType::kCbo},
      {"c", BoxType::kCbo},
      {"uncore_cbox", BoxType::kCbo},
      {"ha", BoxType::kHa},
      {"uncore_ha", BoxType::kHa},
      {"imc", BoxType::kImc},
      {"uncore_imc", BoxType::kImc},
      {"mc", BoxType::kImc},
      {"irp", BoxType::kIrp},
      {"uncore_irp", BoxType::kIrp},
      {"pcu", BoxType::kPcu},
      {"uncore_pcu", BoxType::kPcu},
      {"qpi", BoxType::kQpi},
      {"uncore_qpi", BoxType::kQpi},
      {"qpi_ll", BoxType::kQpi},
      {"r2pcie", BoxType::kR2pcie},
      {"uncore_r2pcie", BoxType::kR2pcie},
      {"r2", BoxType::kR2pcie},
      {"r3qpi", BoxType::kR3qpi},
      {"uncore_r3qpi", BoxType::kR3qpi},
      {"r3", BoxType::kR3qpi},
      {"CBO", BoxType::kCbo},
      {"Uncore_CBox", BoxType::kCbo},
      {"QPI_LL", BoxType::kQpi},
      {"iMC", BoxType::kImc},
      {"R2PCIe", BoxType::kR2pcie},
      {"U", BoxType::kUbox},
  };
  for (const auto& [name, type] : cases) {
    const BoxDescriptor* box = FindBox(name);
    ASSERT_NE(box, nullptr) << name;
    EXPECT_EQ(box->type, type) << name;
    EXPECT_EQ(box, &Box(type)) << name;
  }
  for (std::string_view bad :
       {"", "cbo3", "uncore_cbox_3", "cb", "imc0", "r4", " cbo", "sbox"}) {
    EXPECT_EQ(FindBox(bad), nullptr) << "'" << bad << "'";
  }
}

TEST(BoxDescriptorsTest, AliasesAreUnambiguous) {
  std::set<std::string> seen;
  for (const BoxDescriptor& box : AllBoxes()) {
    std::vector<std::string_view> names = {box.name};
    names.insert(names.end(), box.aliases.begin(), box.aliases.end());
    for (std::string_view n : names) {
      std::string lower(n);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      EXPECT_TRUE(seen.insert(lower).second) << n;
    }
    EXPECT_EQ(FindBox(box.kernel.pmu), &box) << box.kernel.pmu;
  }
}

// The manual's register-name prefix (Tables 1-2, 1-3) and clock domain
// (each box's CLOCKTICKS category) are data in the descriptor.
TEST(BoxDescriptorsTest, RegisterPrefixesAndClockDomains) {
  EXPECT_EQ(Ubox().register_prefix, "U_MSR_PMON_");
  EXPECT_EQ(Cbo().register_prefix, "Cn_MSR_PMON_");
  EXPECT_EQ(Pcu().register_prefix, "PCU_MSR_PMON_");
  EXPECT_EQ(Qpi().register_prefix, "Q_Py_PCI_PMON_");
  for (const BoxDescriptor& box : AllBoxes()) {
    for (const FilterRegisterDescriptor& f : box.filters) {
      EXPECT_TRUE(f.name.starts_with(box.register_prefix)) << f.name;
    }
  }
  EXPECT_EQ(Cbo().clock, ClockDomain::kUclk);
  EXPECT_EQ(Imc().clock, ClockDomain::kDclk);
  EXPECT_EQ(Irp().clock, ClockDomain::kIoClk);
  EXPECT_EQ(Pcu().clock, ClockDomain::kPclk);
  EXPECT_EQ(Qpi().clock, ClockDomain::kQfclk);
  EXPECT_EQ(ClockDomainName(ClockDomain::kDclk), "DCLK");
}

// Roles: what the engines look up instead of names.
TEST(BoxDescriptorsTest, FieldRoles) {
  for (const BoxDescriptor& box : AllBoxes()) {
    ASSERT_NE(box.FindRole(FieldRole::kEnable), nullptr) << box.name;
    EXPECT_EQ(box.FindRole(FieldRole::kEnable)->name, "en");
    EXPECT_EQ(box.FindRole(FieldRole::kEventSelect)->name, "event");
    EXPECT_EQ(box.FindRole(FieldRole::kUmask)->name, "umask");
  }
  EXPECT_EQ(Cbo().FindRole(FieldRole::kThreadFilter),
            &Field(Cbo(), "filter_tid"));
  EXPECT_EQ(Ha().FindRole(FieldRole::kQueueOccupancyReset),
            &Field(Ha(), "q_occ_rst"));
  EXPECT_EQ(Pcu().FindRole(FieldRole::kOccupancyInvert),
            &Field(Pcu(), "occ_invert"));
  EXPECT_EQ(Qpi().FindRole(FieldRole::kExtendedSelect), &Field(Qpi(), "ext"));
  EXPECT_EQ(Irp().FindRole(FieldRole::kOverflowEnable), nullptr);
}

// How the simulator matches traffic against each filter field.
TEST(BoxDescriptorsTest, FilterMatchSemantics) {
  EXPECT_EQ(Field(Cbo(), "filter_opc").match, FilterMatch::kOpcodeEquals);
  EXPECT_EQ(Field(Ha(), "filter_opc").match, FilterMatch::kOpcodeEquals);
  EXPECT_EQ(Field(Cbo(), "filter_nid").match, FilterMatch::kNodeAnyBit);
  EXPECT_EQ(Field(Cbo(), "filter_state").match, FilterMatch::kStateAnyBit);
  EXPECT_EQ(Field(Ha(), "filter_addr_lo").match, FilterMatch::kAddressLow);
  EXPECT_EQ(Field(Ha(), "filter_addr_hi").match, FilterMatch::kAddressHigh);
  EXPECT_EQ(Field(Pcu(), "filter_band2").match, FilterMatch::kFrequencyAtLeast);
  EXPECT_EQ(Field(Qpi(), "match1").match, FilterMatch::kPacketMatch);
  EXPECT_EQ(Field(Qpi(), "match1").pair, 1);
  EXPECT_EQ(Field(Qpi(), "mask1").match, FilterMatch::kPacketMask);
  EXPECT_EQ(Field(Qpi(), "mask1").pair, 1);
  EXPECT_EQ(Field(Qpi(), "match_dnid").match, FilterMatch::kPartOfRegister);
  for (const BoxDescriptor& box : AllBoxes()) {
    for (const FieldDescriptor& f : box.fields) {
      if (f.reg == FieldRegister::kControl) {
        EXPECT_EQ(f.match, FilterMatch::kNone) << box.name << " " << f.name;
      }
    }
  }
}

// The kernel's view: PMU names and counts, filter packing, constraints.
TEST(BoxDescriptorsTest, KernelView) {
  EXPECT_EQ(Cbo().kernel.boxes, 15);
  EXPECT_EQ(R3qpi().kernel.boxes, 2);  // DECISION: #16, three links here
  EXPECT_EQ(Ubox().kernel.counters, 2);
  EXPECT_EQ(Cbo().kernel.packing[1].config, 1);
  EXPECT_EQ(Cbo().kernel.packing[1].shift, 32);
  EXPECT_EQ(Qpi().kernel.packing[2].config, 2);  // MASK0 in config2
  EXPECT_EQ(Qpi().kernel.filter_instances, 2);   // no port-2 match device
  EXPECT_EQ(Ha().kernel.gate, KernelFilterGate::kNever);
  EXPECT_EQ(Ha().kernel.packing[0].config, 0);
  EXPECT_TRUE(Imc().kernel.constraints.empty());
  for (const BoxDescriptor& box : AllBoxes()) {
    EXPECT_TRUE(box.kernel.pmu.starts_with("uncore_")) << box.name;
    EXPECT_EQ(FindBox(box.kernel.pmu), &box) << box.kernel.pmu;
    // The driver keeps no engine bit (en, ov_en, rst, q_occ_rst).
    for (const FieldDescriptor& f : box.fields) {
      if (f.reg == FieldRegister::kControl && f.use == FieldUse::kEngine) {
        EXPECT_EQ(box.kernel.event_mask & f.bits.mask(), 0u) << f.name;
      }
    }
  }
}

}  // namespace
}  // namespace uncore::ivytown

#include "sdk/regions/names.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/hash/hash.h"
#include "fmt/format.h"
#include "uncore/region.h"

namespace uncore {
namespace regions {

[[gnu::visibility("hidden"),
  gnu::tls_model("local-dynamic")]] constinit thread_local int t_busy = 0;

namespace {

// A lock-free table: lookups walk a bucket's list with acquire loads;
// inserts take the mutex and publish a node at the bucket's head.  Nodes
// are never freed (a name lives as long as the process).
struct NameNode {
  std::string text;
  internal::InternedName name{};
  size_t hash = 0;
  NameNode* next = nullptr;  // immutable once published
};

constexpr size_t kNameBuckets = 4096;

struct NameTable {
  std::array<std::atomic<NameNode*>, kNameBuckets> buckets{};
  std::mutex mu;
  std::vector<const NameNode*> by_id;  // guarded by mu
};

NameTable& Names() {
  static NameTable* table = new NameTable();  // never destroyed: names are
  return *table;                              // used until the very end
}

const NameNode* FindName(NameTable& t, std::string_view name, size_t hash) {
  for (const NameNode* n =
           t.buckets[hash % kNameBuckets].load(std::memory_order_acquire);
       n != nullptr; n = n->next) {
    if (n->hash == hash && n->text == name) return n;
  }
  return nullptr;
}

// A direct-mapped cache of names by pointer (and length).
struct NameCacheEntry {
  const char* key = nullptr;
  const internal::InternedName* name = nullptr;
};
constexpr size_t kNameCacheSize = 64;
constinit thread_local std::array<NameCacheEntry, kNameCacheSize>
    t_name_cache{};

NameCacheEntry& CacheEntryOf(const char* key) {
  return t_name_cache[(reinterpret_cast<uintptr_t>(key) >> 3) % kNameCacheSize];
}

// The slow path of every name lookup; kRefusedName when this thread is
// already inside the SDK (the table's lock may be held by it).
int LookUpOrIntern(std::string_view name, NameCacheEntry* entry) {
  if (t_busy != 0) return kRefusedName;
  BusyScope busy;
  const internal::InternedName& interned = InternName(name);
  if (entry != nullptr) *entry = {name.data(), &interned};
  return interned.id;
}

}  // namespace

const internal::InternedName& InternName(std::string_view name) {
  NameTable& t = Names();
  const size_t hash = absl::Hash<std::string_view>{}(name);
  if (const NameNode* n = FindName(t, name, hash)) return n->name;
  std::lock_guard<std::mutex> lock(t.mu);
  if (const NameNode* n = FindName(t, name, hash)) return n->name;
  auto* node = new NameNode();
  node->text = std::string(name);
  node->hash = hash;
  node->name = {node->text.c_str(), node->text.size(),
                static_cast<int>(t.by_id.size())};
  std::atomic<NameNode*>& bucket = t.buckets[hash % kNameBuckets];
  node->next = bucket.load(std::memory_order_relaxed);
  t.by_id.push_back(node);
  bucket.store(node, std::memory_order_release);
  return node->name;
}

std::string RegionName(int name_id) {
  BusyScope busy;
  NameTable& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  if (name_id < 0 || name_id >= static_cast<int>(t.by_id.size())) {
    return fmt::format("<region {}>", name_id);
  }
  return t.by_id[name_id]->text;
}

void LockNamesForFork() { Names().mu.lock(); }
void UnlockNamesAfterFork() { Names().mu.unlock(); }
void InitNames() { (void)Names(); }

}  // namespace regions

RegionId InternRegionName(std::string_view name) {
  regions::BusyScope busy;
  return RegionId{regions::InternName(name).id};
}

namespace internal {

int NameIdOf(const char* name) {
  if (name == nullptr) name = "";
  regions::NameCacheEntry& entry = regions::CacheEntryOf(name);
  if (entry.key == name && entry.name != nullptr &&
      std::strcmp(entry.name->data, name) == 0) {
    return entry.name->id;
  }
  return regions::LookUpOrIntern(name, &entry);
}

int NameIdOf(std::string_view name) {
  regions::NameCacheEntry& entry = regions::CacheEntryOf(name.data());
  if (entry.key == name.data() && entry.name != nullptr &&
      entry.name->size == name.size() &&
      (name.empty() ||
       std::memcmp(entry.name->data, name.data(), name.size()) == 0)) {
    return entry.name->id;
  }
  return regions::LookUpOrIntern(name, &entry);
}

int NameIdAtSiteSlow(RegionSite& site, std::string_view name) {
  if (regions::t_busy != 0) return regions::kRefusedName;
  regions::BusyScope busy;
  const InternedName& interned = regions::InternName(name);
  site.last.store(&interned, std::memory_order_release);
  return interned.id;
}

}  // namespace internal
}  // namespace uncore

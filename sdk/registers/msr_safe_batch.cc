#include "sdk/registers/msr_safe_batch.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sdk/common/text.h"
#include "sdk/registers/access_errors.h"
#include "sdk/registers/posix_io.h"

namespace uncore::registers {
namespace {

static_assert(sizeof(MsrBatchOp) == 32 && offsetof(MsrBatchOp, msr) == 8 &&
              offsetof(MsrBatchOp, msrdata) == 16);
static_assert(sizeof(MsrBatchArray) == 16 && offsetof(MsrBatchArray, ops) == 8);

static_assert(_IOWR('c', 0xA2, MsrBatchArray) == kMsrBatchIoctl);

// `err` before the ioctl: the kernel writes 0 or a negative errno into
// every operation it looks at, so this survives only where it did not.
constexpr int32_t kErrUntouched = 0x7fffffff;
// msr-safe releases whose batch layout is the one above.
constexpr int kMaxKnownMsrSafeMajor = 2;

}  // namespace

std::optional<uint32_t> ReadMsrSafeVersion(const std::string& path) {
  const int fd = OpenRetry(path, O_RDONLY);
  if (fd < 0) return std::nullopt;
  char buffer[64] = {};
  const ssize_t n = PreadRetry(fd, buffer, sizeof(buffer) - 1, 0);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  std::string_view text =
      common::StripWhitespace(std::string_view(buffer, std::strlen(buffer)));
  std::vector<std::string_view> parts = common::Split(text, '.');
  if (parts.size() != 3) return std::nullopt;
  uint32_t version = 0;
  for (std::string_view part : parts) {
    unsigned value = 0;
    auto [ptr, ec] =
        std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || ptr != part.data() + part.size() || value > 255) {
      return std::nullopt;
    }
    version = (version << 8) | value;
  }
  return version;
}

std::unique_ptr<MsrSafeBatch> MsrSafeBatch::Open(
    const std::string& dev_cpu_root) {
  std::optional<uint32_t> version =
      ReadMsrSafeVersion(dev_cpu_root + "/msr_safe_version");
  // A later major release may change the operation layout: read one by one.
  if (version && (*version >> 16) > kMaxKnownMsrSafeMajor) return nullptr;
  const int fd = OpenRetry(dev_cpu_root + "/msr_batch", O_RDONLY);
  if (fd < 0) return nullptr;
  std::unique_ptr<MsrSafeBatch> batch(new MsrSafeBatch());
  batch->fd_ = fd;
  // Unknown (the version device is root-only): 0, which releases before
  // 2.0 ignore and later ones refuse, sending the caller to its loop.
  batch->version_ = version.value_or(0);
  return batch;
}

MsrSafeBatch::~MsrSafeBatch() { Close(); }

void MsrSafeBatch::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool MsrSafeBatch::ReadChunk(std::span<MsrRead> reads,
                             RegisterSpace* fallback) {
  if (fd_ < 0) return false;
  uint32_t numops = 0;
  for (size_t i = 0; i < reads.size(); ++i) {
    MsrRead& r = reads[i];
    if (r.cpu < 0 || r.cpu > 0xffff) continue;  // the loop below reports it
    ops_[numops] = MsrBatchOp{.cpu = static_cast<uint16_t>(r.cpu),
                              .isrdmsr = 1,
                              .err = kErrUntouched,
                              .msr = r.msr,
                              .msrdata = 0,
                              .wmask = 0};
    read_index_[numops] = static_cast<uint32_t>(i);
    ++numops;
  }
  int rc = 0;
  if (numops > 0) {
    MsrBatchArray array{
        .numops = numops, .version = version_, .ops = ops_.data()};
    do {
      rc = ::ioctl(fd_, kMsrBatchIoctl, &array);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
      bool touched = false;
      for (uint32_t k = 0; k < numops; ++k) {
        touched = touched || ops_[k].err != kErrUntouched;
      }
      if (!touched) return false;  // refused as a whole: the loop reads all
    }
  }
  // CPUs msr-safe cannot address: ReadMsr explains.
  for (MsrRead& r : reads) {
    if (r.cpu < 0 || r.cpu > 0xffff) {
      r.status = fallback->ReadMsr(r.cpu, r.msr, &r.value);
    }
  }
  for (uint32_t k = 0; k < numops; ++k) {
    const MsrBatchOp& op = ops_[k];
    MsrRead& r = reads[read_index_[k]];
    if (rc == 0 && op.err == 0) {
      r.value = op.msrdata;
      r.status = absl::OkStatus();
    } else if (op.err != 0 && op.err != kErrUntouched) {
      r.status = MsrBatchOpError(op.err, r.cpu, r.msr);
    } else {
      // The batch failed on another operation: msr-safe may not have run
      // this one (it checks the allowlist of all before running any).
      r.status = fallback->ReadMsr(r.cpu, r.msr, &r.value);
    }
  }
  return true;
}

}  // namespace uncore::registers

#include "integrations/mpi/trace_merge.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "uncore/report_file.h"

namespace uncore::mpi {
namespace {

constexpr size_t kPiece = size_t{1} << 20;
constexpr int kTagHeader = 7301;
constexpr int kTagPiece = 7302;

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// "123.456" (microseconds) -> 123456 (nanoseconds); nullopt for anything
// else (an exponent, more than three decimals).
std::optional<int64_t> ParseMicros(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text[0] == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  int64_t whole = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (whole > INT64_MAX / 100) return std::nullopt;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  int64_t fraction = 0;
  int digits = 0;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (++digits > 3) return std::nullopt;
      fraction = fraction * 10 + (text[i] - '0');
    }
  }
  if (i != text.size()) return std::nullopt;
  for (; digits < 3; ++digits) fraction *= 10;
  const int64_t ns = whole * 1000 + fraction;
  return negative ? -ns : ns;
}

std::string FormatMicros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t a =
      negative ? static_cast<uint64_t>(-ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", a / 1000, a % 1000);
}

}  // namespace

std::string ShiftTs(std::string_view event, int64_t shift_ns) {
  constexpr std::string_view kKey = "\"ts\":";
  const size_t key = event.find(kKey);
  if (key == std::string_view::npos || shift_ns == 0) {
    return std::string(event);
  }
  const size_t begin = key + kKey.size();
  size_t end = begin;
  while (end < event.size() && event[end] != ',' && event[end] != '}') ++end;
  const std::string_view number = event.substr(begin, end - begin);
  std::string shifted;
  if (std::optional<int64_t> ns = ParseMicros(number)) {
    shifted = FormatMicros(*ns + shift_ns);
  } else {
    const double us = std::strtod(std::string(number).c_str(), nullptr);
    shifted = fmt::format("{:.3f}", us + static_cast<double>(shift_ns) / 1e3);
  }
  std::string out(event.substr(0, begin));
  out += shifted;
  out += event.substr(end);
  return out;
}

void TraceEventShifter::Line(std::string_view line, std::string* out) {
  // Our traces hold one event per line, each an object beginning {"ph":;
  // the opening and closing lines of the file are not events.
  if (line.substr(0, 6) != "{\"ph\":") return;
  if (!line.empty() && line.back() == ',') line.remove_suffix(1);
  if (!*first_) *out += ",\n";
  *first_ = false;
  *out += ShiftTs(line, shift_ns_);
}

void TraceEventShifter::Feed(std::string_view piece, std::string* out) {
  for (;;) {
    const size_t newline = piece.find('\n');
    if (newline == std::string_view::npos) {
      partial_ += piece;
      return;
    }
    if (partial_.empty()) {
      Line(piece.substr(0, newline), out);
    } else {
      partial_ += piece.substr(0, newline);
      Line(partial_, out);
      partial_.clear();
    }
    piece.remove_prefix(newline + 1);
  }
}

void TraceEventShifter::Finish(std::string* out) {
  if (!partial_.empty()) Line(partial_, out);
  partial_.clear();
}

std::optional<uint64_t> TraceOrigin(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  constexpr std::string_view kKey = "\"origin_monotonic_ns\":";
  const size_t at = tail.rfind(kKey);
  if (at == std::string::npos) return std::nullopt;
  return std::strtoull(tail.c_str() + at + kKey.size(), nullptr, 10);
}

absl::Status MergeTraces(MPI_Comm comm, const std::string& own_path,
                         bool remove_own, const std::string& merged_path) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int merging = rank == 0 && !merged_path.empty() ? 1 : 0;
  MPI_Bcast(&merging, 1, MPI_INT, 0, comm);
  const std::optional<uint64_t> origin =
      own_path.empty() ? std::nullopt : TraceOrigin(own_path);
  absl::Status status;
  if (merging != 0) {
    // Clocks: this rank's start on rank 0's clock.
    MPI_Barrier(comm);
    const uint64_t local = MonotonicNs();
    uint64_t rank0 = local;
    MPI_Bcast(&rank0, 1, MPI_UINT64_T, 0, comm);
    const int64_t aligned =
        origin.has_value()
            ? static_cast<int64_t>(*origin) +
                  (static_cast<int64_t>(rank0) - static_cast<int64_t>(local))
            : INT64_MAX;
    int64_t earliest = 0;
    MPI_Allreduce(&aligned, &earliest, 1, MPI_INT64_T, MPI_MIN, comm);
    const int64_t shift = origin.has_value() ? aligned - earliest : 0;
    // Each rank's shift and size (-1: no trace), then its file in pieces.
    std::FILE* file =
        origin.has_value() ? std::fopen(own_path.c_str(), "rb") : nullptr;
    int64_t header[2] = {shift, -1};
    if (file != nullptr) {
      std::fseek(file, 0, SEEK_END);
      header[1] = std::ftell(file);
      std::fseek(file, 0, SEEK_SET);
    }
    std::string piece(kPiece, '\0');
    if (rank != 0) {
      MPI_Send(header, 2, MPI_INT64_T, 0, kTagHeader, comm);
      for (int64_t sent = 0; sent < header[1];) {
        const size_t n = std::fread(piece.data(), 1, kPiece, file);
        if (n == 0) {
          piece.assign(kPiece, ' ');  // the file shrank: pad, never hang
        }
        const int count = static_cast<int>(std::min<int64_t>(
            static_cast<int64_t>(n == 0 ? kPiece : n), header[1] - sent));
        MPI_Send(piece.data(), count, MPI_CHAR, 0, kTagPiece, comm);
        sent += count;
      }
    } else {
      absl::StatusOr<std::unique_ptr<ReportFileWriter>> out =
          ReportFileWriter::Open(merged_path);
      bool first = true;
      std::string text = "{\"traceEvents\":[\n";
      std::vector<int> missing;
      for (int r = 0; r < size; ++r) {
        int64_t their[2] = {header[0], header[1]};
        if (r != 0) {
          MPI_Recv(their, 2, MPI_INT64_T, r, kTagHeader, comm,
                   MPI_STATUS_IGNORE);
        }
        if (their[1] < 0) missing.push_back(r);
        TraceEventShifter shifter(their[0], &first);
        for (int64_t got = 0; got < their[1];) {
          int count = 0;
          if (r == 0) {
            count = static_cast<int>(std::fread(piece.data(), 1, kPiece, file));
            if (count == 0) break;
          } else {
            MPI_Status st;
            MPI_Recv(piece.data(), static_cast<int>(kPiece), MPI_CHAR, r,
                     kTagPiece, comm, &st);
            MPI_Get_count(&st, MPI_CHAR, &count);
          }
          got += count;
          shifter.Feed(std::string_view(piece.data(), count), &text);
          if (text.size() >= kPiece && out.ok() && status.ok()) {
            status = (*out)->Write(text);
            text.clear();
          }
          if (text.size() >= kPiece) text.clear();  // nowhere to write
        }
        shifter.Finish(&text);
      }
      text += fmt::format(
          "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{{\"producer\":"
          "\"Uncore SDK\",\"merged_ranks\":{},\"ranks_without_trace\":[{}]}}}}"
          "\n",
          size - static_cast<int>(missing.size()), fmt::join(missing, ","));
      if (!out.ok()) {
        status = out.status();
      } else if (status.ok()) {
        status = (*out)->Write(text);
        if (status.ok()) status = (*out)->Commit();
      }
    }
    if (file != nullptr) std::fclose(file);
  }
  if (remove_own && !own_path.empty()) unlink(own_path.c_str());
  return status;
}

}  // namespace uncore::mpi

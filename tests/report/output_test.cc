// Tests of report file names and report files (sdk/report/output.h): the
// placeholders, the checks made at start, and the write that replaces a
// report only once the new one is complete.
#include "sdk/report/output.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/report/report.h"
#include "tests/report/report_test_util.h"

namespace uncore::report {
namespace {

using ::testing::HasSubstr;

OutputContext Context() {
  OutputContext c;
  c.pid = 4242;
  c.host = "node17";
  c.rank = 3;
  c.start_unix_ns = uint64_t{1'700'000'000} * 1'000'000'000 + 999;  // UTC
  return c;
}

TEST(ExpandOutputTest, ExpandsEachPlaceholder) {
  const OutputContext c = Context();
  EXPECT_EQ(*ExpandOutput("out-%p.json", c), "out-4242.json");
  EXPECT_EQ(*ExpandOutput("%h/%r.csv", c), "node17/3.csv");
  // 1,700,000,000 s after the epoch is 2023-11-14 22:13:20 UTC.
  EXPECT_EQ(*ExpandOutput("run-%t.txt", c), "run-20231114-221320.txt");
  EXPECT_EQ(*ExpandOutput("100%%-%p%%", c), "100%-4242%");
  EXPECT_EQ(*ExpandOutput("%r-%r", c), "3-3");
  EXPECT_EQ(*ExpandOutput("-", c), "-");
  EXPECT_EQ(*ExpandOutput("plain.json", c), "plain.json");
  EXPECT_EQ(*ExpandOutput("", c), "");
}

TEST(ExpandOutputTest, UnknownRankNamesThePid) {
  OutputContext c = Context();
  c.rank.reset();
  EXPECT_EQ(*ExpandOutput("out-%r.json", c), "out-pid4242.json");
}

TEST(ExpandOutputTest, UnknownPlaceholderIsAnError) {
  const absl::StatusOr<std::string> unknown =
      ExpandOutput("out-%q.json", Context());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message = common::StatusMessage(unknown.status());
  EXPECT_THAT(message, HasSubstr("unknown placeholder '%q' at column 5"));
  EXPECT_THAT(message, HasSubstr("out-%q.json"));
  EXPECT_THAT(message, HasSubstr("%p (process id)"));
  EXPECT_THAT(message, HasSubstr("%% (a literal %)"));

  const absl::StatusOr<std::string> lone = ExpandOutput("out%", Context());
  ASSERT_FALSE(lone.ok());
  EXPECT_THAT(common::StatusMessage(lone.status()), HasSubstr("lone '%'"));
  EXPECT_FALSE(ExpandOutput("%P", Context()).ok());  // case matters
}

TEST(RankFromEnvironmentTest, ReadsTheLaunchersInOrder) {
  std::map<std::string, std::string> env;
  auto lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_FALSE(RankFromEnvironment(lookup).has_value());
  env["SLURM_PROCID"] = "7";
  EXPECT_EQ(RankFromEnvironment(lookup), 7);
  env["PMI_RANK"] = "5";
  EXPECT_EQ(RankFromEnvironment(lookup), 5);
  env["OMPI_COMM_WORLD_RANK"] = "12";
  EXPECT_EQ(RankFromEnvironment(lookup), 12);
  // A value that is not a rank is skipped.
  env["OMPI_COMM_WORLD_RANK"] = "x1";
  EXPECT_EQ(RankFromEnvironment(lookup), 5);
  env["PMI_RANK"] = "";
  EXPECT_EQ(RankFromEnvironment(lookup), 7);
  env = {{"MV2_COMM_WORLD_RANK", "0"}};
  EXPECT_EQ(RankFromEnvironment(lookup), 0);
  env = {{"PMIX_RANK", "-1"}};
  EXPECT_FALSE(RankFromEnvironment(lookup).has_value());
}

TEST(CurrentOutputContextTest, IsThisProcess) {
  const OutputContext c = CurrentOutputContext(123);
  EXPECT_EQ(c.pid, getpid());
  EXPECT_FALSE(c.host.empty());
  EXPECT_EQ(c.start_unix_ns, 123u);
}

TEST(AbsoluteOutputTest, JoinsRelativeNamesToTheDirectory) {
  EXPECT_EQ(*AbsoluteOutput("out.json", "/work/run"), "/work/run/out.json");
  EXPECT_EQ(*AbsoluteOutput("a/out.json", "/work/run/"),
            "/work/run/a/out.json");
  EXPECT_EQ(*AbsoluteOutput("/abs/out.json", "/work"), "/abs/out.json");
  EXPECT_EQ(*AbsoluteOutput("-", "/work"), "-");
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(*AbsoluteOutput("x.csv"), std::string(cwd) + "/x.csv");
}

// The names in `dir` that start with `prefix`.
std::vector<std::string> Entries(const std::string& dir,
                                 const std::string& prefix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  closedir(d);
  return names;
}

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempPath("dir");
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    for (const std::string& name : Entries(dir_, "")) {
      if (name != "." && name != "..") std::remove((dir_ + "/" + name).c_str());
    }
    rmdir(dir_.c_str());
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // Files other than `keep` left in the folder: temporary files.
  std::vector<std::string> Leftovers(const std::vector<std::string>& keep) {
    std::vector<std::string> left;
    for (const std::string& name : Entries(dir_, "")) {
      if (name == "." || name == "..") continue;
      bool kept = false;
      for (const std::string& k : keep) kept = kept || k == name;
      if (!kept) left.push_back(name);
    }
    return left;
  }

  std::string dir_;
};

TEST_F(OutputFileTest, CheckAcceptsNewAndExistingFilesAndLeavesNothing) {
  EXPECT_TRUE(CheckOutputWritable(Path("new.json")).ok());
  EXPECT_FALSE(std::ifstream(Path("new.json")).good());
  std::ofstream(Path("old.json")) << "{}";
  EXPECT_TRUE(CheckOutputWritable(Path("old.json")).ok());
  EXPECT_EQ(ReadFile(Path("old.json")), "{}");
  EXPECT_THAT(Leftovers({"old.json"}), ::testing::IsEmpty());
  EXPECT_TRUE(CheckOutputWritable("-").ok());
  if (access("/dev/null", W_OK) == 0) {
    EXPECT_TRUE(CheckOutputWritable("/dev/null").ok());
  }
}

TEST_F(OutputFileTest, CheckSaysWhatIsWrongAndWhatToDo) {
  const absl::Status missing = CheckOutputWritable(Path("no/such/out.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(common::StatusMessage(missing), HasSubstr(Path("no/such")));
  EXPECT_THAT(common::StatusMessage(missing),
              HasSubstr("No such file or directory"));
  EXPECT_THAT(common::StatusMessage(missing),
              HasSubstr("create the directory first"));

  const absl::Status directory = CheckOutputWritable(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(common::StatusMessage(directory), HasSubstr("Is a directory"));

  std::ofstream(Path("file")) << "x";
  const absl::Status not_dir = CheckOutputWritable(Path("file/out.json"));
  ASSERT_FALSE(not_dir.ok());
  EXPECT_THAT(common::StatusMessage(not_dir), HasSubstr("Not a directory"));
}

TEST_F(OutputFileTest, LongNamesUpToTheLimitWorkAndLongerOnesSayWhy) {
  // 231 to 255 bytes: refused before (the temporary file's name went past
  // NAME_MAX and the error blamed the directory).
  for (const size_t length : {231, 240, 254, 255}) {
    const std::string name = std::string(length - 5, 'n') + ".json";
    EXPECT_TRUE(CheckOutputWritable(Path(name)).ok()) << length;
    ASSERT_TRUE(WriteReportFile(Path(name), "{}").ok()) << length;
    EXPECT_EQ(ReadFile(Path(name)), "{}");
    ASSERT_TRUE(WriteReportFile(Path(name), "{\"again\": 1}").ok());
    EXPECT_THAT(Leftovers({name}), ::testing::IsEmpty());
    std::remove(Path(name).c_str());
  }
  // 256: the file system cannot hold it, and the message says so.
  const absl::Status too_long =
      CheckOutputWritable(Path(std::string(251, 'n') + ".json"));
  EXPECT_EQ(too_long.code(), absl::StatusCode::kInvalidArgument) << too_long;
  EXPECT_THAT(common::StatusMessage(too_long), HasSubstr("its name 'nnnn"));
  EXPECT_THAT(common::StatusMessage(too_long),
              HasSubstr("is 256 bytes, and a file name has at most 255 "
                        "(NAME_MAX) here"));
  const absl::Status long_dir =
      CheckOutputWritable(Path(std::string(300, 'd') + "/out.json"));
  EXPECT_THAT(common::StatusMessage(long_dir),
              HasSubstr("the directory name 'ddd"));
  const absl::Status long_path =
      CheckOutputWritable(Path(std::string(5000, 'p')));
  EXPECT_THAT(common::StatusMessage(long_path),
              HasSubstr("(PATH_MAX): choose a shorter one"));
  // The message quotes at most a few hundred bytes of it.
  EXPECT_LT(common::StatusMessage(long_path).size(), 1000u);
}

TEST_F(OutputFileTest, PrepareExpandsResolvesAndChecks) {
  OutputContext c = Context();
  const absl::StatusOr<std::string> path =
      PrepareOutput(Path("out-%p-%r.json"), c);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, Path("out-4242-3.json"));
  EXPECT_EQ(*PrepareOutput("-", c), "-");
  EXPECT_FALSE(PrepareOutput("", c).ok());
  EXPECT_FALSE(PrepareOutput(Path("%x.json"), c).ok());
  EXPECT_FALSE(PrepareOutput(Path("none/%p.json"), c).ok());
  // Relative names are resolved against the working directory.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(dir_.c_str()), 0);
  char inside[4096];
  ASSERT_NE(getcwd(inside, sizeof(inside)), nullptr);
  const absl::StatusOr<std::string> relative = PrepareOutput("r-%h.csv", c);
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_TRUE(relative.ok()) << relative.status();
  EXPECT_EQ(*relative, std::string(inside) + "/r-node17.csv");
}

TEST_F(OutputFileTest, WriteReplacesWholeAndLeavesNoTemporaryFile) {
  const std::string path = Path("out.json");
  ASSERT_TRUE(WriteReportFile(path, "first").ok());
  EXPECT_EQ(ReadFile(path), "first");
  ASSERT_TRUE(chmod(path.c_str(), 0640) == 0);
  ASSERT_TRUE(WriteReportFile(path, "second, longer").ok());
  EXPECT_EQ(ReadFile(path), "second, longer");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // the permissions carry over
  EXPECT_THAT(Leftovers({"out.json"}), ::testing::IsEmpty());
}

TEST_F(OutputFileTest, WriteFollowsASymbolicLink) {
  ASSERT_TRUE(WriteReportFile(Path("target.json"), "old").ok());
  ASSERT_EQ(symlink(Path("target.json").c_str(), Path("link.json").c_str()), 0);
  ASSERT_TRUE(WriteReportFile(Path("link.json"), "new").ok());
  EXPECT_EQ(ReadFile(Path("target.json")), "new");
  struct stat st;
  ASSERT_EQ(lstat(Path("link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// Writes with the file size limited to `limit` bytes (SIGXFSZ ignored, so
// that a write past it fails with EFBIG instead of killing the test).
absl::Status WriteWithSizeLimit(const std::string& path,
                                const std::string& text, rlim_t limit) {
  rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = limit;
  struct sigaction ignore = {};
  struct sigaction previous = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, &previous);
  setrlimit(RLIMIT_FSIZE, &small);
  const absl::Status status = WriteReportFile(path, text);
  setrlimit(RLIMIT_FSIZE, &old);
  sigaction(SIGXFSZ, &previous, nullptr);
  return status;
}

TEST_F(OutputFileTest, FailedWriteLeavesTheExistingReportUntouched) {
  const std::string path = Path("out.json");
  const std::string good(100, 'g');
  ASSERT_TRUE(WriteReportFile(path, good).ok());
  const absl::Status status =
      WriteWithSizeLimit(path, std::string(4096, 'n'), 1000);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(common::StatusMessage(status), HasSubstr("'" + path + "'"));
  EXPECT_THAT(common::StatusMessage(status), HasSubstr("File too large"));
  EXPECT_THAT(common::StatusMessage(status),
              HasSubstr("the previous report there is left as it was"));
  EXPECT_EQ(ReadFile(path), good);
  EXPECT_THAT(Leftovers({"out.json"}), ::testing::IsEmpty());

  // And a new name that cannot be written leaves nothing behind.
  EXPECT_FALSE(
      WriteWithSizeLimit(Path("new.json"), std::string(4096, 'n'), 1000).ok());
  EXPECT_THAT(Leftovers({"out.json"}), ::testing::IsEmpty());
}

TEST_F(OutputFileTest, DevicesAreWrittenInPlace) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  EXPECT_TRUE(CheckOutputWritable("/dev/full").ok());
  const absl::Status full = WriteReportFile("/dev/full", "report");
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(common::StatusMessage(full), HasSubstr("'/dev/full'"));
  EXPECT_THAT(common::StatusMessage(full), HasSubstr("No space left"));
  EXPECT_TRUE(WriteReportFile("/dev/null", "report").ok());
  // A FIFO: written in place (a reader on the other end gets it whole).
  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::FILE* reader = nullptr;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    _exit(WriteReportFile(fifo, "through the fifo").ok() ? 0 : 1);
  }
  reader = std::fopen(fifo.c_str(), "r");
  ASSERT_NE(reader, nullptr);
  char buffer[64] = {};
  const size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, reader);
  std::fclose(reader);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(std::string(buffer, n), "through the fifo");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(OutputFileTest, WriteReportUsesTheAtomicWrite) {
  const std::string path = Path("r.csv");
  std::ofstream(path) << "old";
  ASSERT_TRUE(WriteReport(MakeResults(false), path).ok());
  EXPECT_EQ(ReadFile(path), FormatCsv(MakeResults(false)));
  EXPECT_THAT(Leftovers({"r.csv"}), ::testing::IsEmpty());
}

}  // namespace
}  // namespace uncore::report

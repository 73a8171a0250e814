// Loading tests of the Android library's entry points: a bundle inside a larger file, by
// descriptor, offset and length (an APK's uncompressed asset: AssetManager.openFd), mapped in
// place or read; a bundle copied from a caller's buffer; and the bundle's extra files
// (labels and the like, from liteexport export --extra-file). Vectors: tests/make_vectors.py.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "liteexport/runtime.h"
#include "mapped_file.h"
#include "tensor_io.h"
#include "test_support.h"

using namespace liteexport;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The first "run" case of `bundle` in cases.txt: its method, inputs and runtime_py's first output.
struct RunCase {
  std::string method;
  std::vector<Tensor> inputs;
  Tensor expected;
};

RunCase first_run(const std::string& dir, const std::string& bundle) {
  std::ifstream in(dir + "/cases.txt");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.size() < 4 || w[0] != "run" || w[1] != bundle) continue;
    RunCase c;
    c.method = w[2];
    size_t pos = 3;
    const size_t n = std::stoul(w[pos++]);
    for (size_t i = 0; i < n; ++i) c.inputs.push_back(tensor_io::read_file(dir + "/" + w[pos++]));
    ++pos;  // the output count
    c.expected = tensor_io::read_file(dir + "/" + w[pos]);
    return c;
  }
  ADD_FAILURE() << "no run case of " + bundle + " in " + dir + "/cases.txt";
  return {};
}

// A temporary file holding `prefix` bytes of 0xAB, then `payload`, then 100 bytes of 0xCD: a
// bundle that is not at the start of its file and not at its end, as an asset inside an APK.
struct Embedded {
  std::string path;
  int fd = -1;
  Embedded(const std::string& payload, size_t prefix) {
    char name[] = "/tmp/liteexport_embedded_XXXXXX";
    fd = ::mkstemp(name);
    path = name;
    const std::string content = std::string(prefix, '\xAB') + payload + std::string(100, '\xCD');
    EXPECT_TRUE(fd >= 0 && ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()))
        << "cannot write " + path;
  }
  ~Embedded() {
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
  }
};

template <typename Body>
std::string format_error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.kind() == ErrorKind::Format ? std::string(e.what()) : "not a Format error: " + std::string(e.what());
  }
  return "no error";
}

void check_runs(Module& module, const RunCase& c, const std::string& what) {
  try {
    auto got = module.run_method(c.method, c.inputs);
    std::string why;
    EXPECT_TRUE(!got.empty() && got[0] && tensor_io::allclose(*got[0], c.expected, 1e-5, 1e-4, &why))
        << what + ": " + why;
  } catch (const Error& e) {
    ADD_FAILURE() << what + ": " + e.what();
  }
}

// Each test loads the vectors' mlp_static.ptl and runs its first case.
class Loading : public ::testing::Test {
 protected:
  void SetUp() override { EXPECT_TRUE(bundle.size() > 100) << "mlp_static.ptl missing from " + dir; }

  const std::string dir = liteexport::testing::vectors_dir();
  const std::string bundle = slurp(dir + "/mlp_static.ptl");
  const RunCase c = first_run(dir, "mlp_static.ptl");
};

}  // namespace

// Mapped in place when the range starts 16-byte aligned (inside a page, past the first page),
// read otherwise; either way exactly the range, and the descriptor can be closed after.
TEST_F(Loading, FromDescriptorOffsetAndLength) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (size_t prefix : {size_t{0}, 2 * page + 48, page, size_t{4100}, size_t{7}}) {
    const std::string what = "bundle at offset " + std::to_string(prefix);
    Embedded file(bundle, prefix);
    auto bytes = Bytes::map_fd(file.fd, static_cast<int64_t>(prefix), static_cast<int64_t>(bundle.size()), what);
    EXPECT_TRUE(bytes->mapped() == (prefix % 16 == 0)) << what + ": mapped " + std::to_string(bytes->mapped());
    EXPECT_TRUE(bytes->size() == bundle.size() && std::memcmp(bytes->data(), bundle.data(), bundle.size()) == 0)
        << what + ": not the range's bytes";
    EXPECT_TRUE(reinterpret_cast<uintptr_t>(bytes->data()) % 16 == 0) << what + ": misaligned";
    auto read = Bytes::read_fd(file.fd, static_cast<int64_t>(prefix), static_cast<int64_t>(bundle.size()), what);
    EXPECT_TRUE(!read->mapped() && read->size() == bundle.size() && std::memcmp(read->data(), bundle.data(), bundle.size()) == 0)
        << what + ": read_fd";
    for (bool copy : {false, true}) {
      LoadOptions options;
      options.copy = copy;
      try {
        auto module = Module::load_from_fd(file.fd, static_cast<int64_t>(prefix), static_cast<int64_t>(bundle.size()), options);
        ::close(file.fd);  // the module must not need the descriptor any more
        file.fd = -1;
        check_runs(*module, c, what + (copy ? " (copy)" : " (mapped)"));
        EXPECT_TRUE(module->method_names() == std::vector<std::string>{"forward"}) << what + ": methods";
      } catch (const Error& e) {
        ADD_FAILURE() << what + ": " + e.what();
      }
      if (file.fd < 0) file.fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    }
  }
}

// Ranges that are not the bundle: Format errors naming the problem.
TEST_F(Loading, BadRangesAreFormatErrors) {
  Embedded file(bundle, 64);
  const auto size = static_cast<int64_t>(bundle.size());
  const int64_t total = 64 + size + 100;
  std::string e = format_error_of([&] { Module::load_from_fd(file.fd, 64, size + 101, {}); });
  EXPECT_TRUE(e.find("lies outside the file of " + std::to_string(total) + " bytes") != std::string::npos) << e;
  e = format_error_of([&] { Module::load_from_fd(file.fd, total, 1, {}); });
  EXPECT_TRUE(e.find("lies outside the file") != std::string::npos) << e;
  e = format_error_of([&] { Module::load_from_fd(file.fd, -16, size, {}); });
  EXPECT_TRUE(e.find("the offset must be >= 0") != std::string::npos) << e;
  e = format_error_of([&] { Module::load_from_fd(file.fd, 64, 0, {}); });
  EXPECT_TRUE(e.find("the length > 0") != std::string::npos) << e;
  e = format_error_of([&] { Module::load_from_fd(file.fd, 0, size, {}); });  // the 0xAB prefix
  EXPECT_TRUE(e.find("not a PTMF bundle") != std::string::npos) << e;
  e = format_error_of([&] { Module::load_from_fd(-1, 0, size, {}); });
  EXPECT_TRUE(e.find("invalid file descriptor -1") != std::string::npos) << e;
  int pipe_fds[2];
  EXPECT_TRUE(::pipe(pipe_fds) == 0) << "pipe";
  e = format_error_of([&] { Module::load_from_fd(pipe_fds[0], 0, size, {}); });
  EXPECT_TRUE(e.find("not a regular file") != std::string::npos) << e;
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// A copied buffer: the caller's bytes may be overwritten right after the load.
TEST_F(Loading, CopiedBufferMayBeClearedAfterTheLoad) {
  std::string buffer = " " + bundle;  // misaligned on purpose
  auto module = Module::load_from_copy(reinterpret_cast<const uint8_t*>(buffer.data()) + 1, bundle.size());
  std::fill(buffer.begin(), buffer.end(), '\0');
  check_runs(*module, c, "load_from_copy after the buffer was cleared");
}

// Extra files: the user's, in the bundle's order (sorted by name when packed), without
// liteexport's own debug table, which the bundle does hold.
TEST_F(Loading, ExtraFilesAreTheUsersInTheBundlesOrder) {
  const std::string path = dir + "/extra_files.ptl";
  auto module = Module::load(path);
  const std::vector<std::string> names = module->extra_file_names();
  EXPECT_TRUE((names == std::vector<std::string>{"config/empty.bin", "labels.txt"}))
      << "extra_file_names: " + std::to_string(names.size()) + " names";
  EXPECT_TRUE(module->extra_file("labels.txt") == std::optional<std::string>("cat\ndog\n\xc3\xa9l\xc3\xa9phant\n"))
      << "labels.txt content";
  EXPECT_TRUE(module->extra_file("config/empty.bin") == std::optional<std::string>(""))
      << "an empty file is empty, not absent";
  EXPECT_TRUE(!module->extra_file("nope.txt").has_value()) << "an absent file";
  EXPECT_TRUE(!module->extra_file("liteexport/debug_table").has_value()) << "liteexport's own file is not the user's";
  EXPECT_TRUE(slurp(path).find("liteexport/debug_table") != std::string::npos)
      << "the bundle has no debug table to hide";
  auto plain = Module::load(dir + "/mlp_static.ptl");
  EXPECT_TRUE(plain->extra_file_names().empty()) << "mlp_static.ptl has user files";
}

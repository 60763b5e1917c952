// numpy's .npy and .npz files: lf::save / lf::load / lf::savez / lf::load_npz.
// .npy (numpy.lib.format): magic, version, a Python dict literal header padded to 64 bytes, then
// the raw elements. .npz: a zip archive of .npy files; written stored (uncompressed), read stored
// or deflated (zlib, loaded with dlopen when a deflated entry is met, so the library links no zlib).
#include <dlfcn.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "codegen/ir/node.h"
#include "frontend/complex.h"
#include "frontend/file_io.h"
#include "frontend/record.h"
#include "lazyfuse/interop.h"
#include "runtime/checked.h"
#include "runtime/storage.h"

namespace lf {
namespace {

using detail::file_error;
using detail::read_file;
using detail::write_file;
using detail::canonical_bools;

const char* npy_descr(DType d) {
  switch (d) {
    case DType::Bool: return "|b1";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Float16: return "<f2";
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Complex64: return "<c8";
    case DType::Complex128: return "<c16";
    case DType::BFloat16: return nullptr;
  }
  return nullptr;
}

// The header and elements of `t` as one .npy image (version 1.0).
std::vector<char> npy_bytes(const char* op, const std::string& path, const Tensor& t) {
  const char* descr = npy_descr(t.dtype());
  if (!descr)
    file_error(op, path, std::string("numpy has no ") + dtype_name(t.dtype()) + " dtype; cast the tensor first (.to(lf::DType::Float32))");
  std::string shape = "(";
  for (int64_t s : t.shape()) shape += std::to_string(s) + ", ";
  if (t.dim() == 1) shape.resize(shape.size() - 1);  // "(3,)"
  else if (t.dim() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t pad = 64 - (10 + header.size() + 1) % 64;
  header.append(pad == 64 ? 0 : pad, ' ');
  header += '\n';
  if (header.size() > 65535) file_error(op, path, "the header is too long for a version 1.0 .npy file");
  // The elements, row-major, from the host.
  Tensor host = t.contiguous().to(Device::cpu()).contiguous();
  const size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
  std::vector<char> out;
  out.reserve(10 + header.size() + bytes);
  const char magic[] = "\x93NUMPY\x01\x00";
  out.insert(out.end(), magic, magic + 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  if (bytes > 0) {
    const char* p = static_cast<const char*>(host.data_ptr());
    out.insert(out.end(), p, p + bytes);
    if (t.dtype() == DType::Bool) canonical_bools(out.data() + out.size() - bytes, bytes);  // a view's bytes
  }
  return out;
}

// ---- Reading .npy from bytes in memory.

struct NpyHeader {
  DType dtype = DType::Float32;
  bool swap = false;  // big-endian elements
  bool fortran = false;
  Shape shape;
  size_t data_offset = 0;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const char* op, const std::string& path) : s_(text), op_(op), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string_literal();
      expect(':');
      skip_space();
      if (key == "descr") {
        descr(string_literal(), h);
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        have_shape = true;
      } else {
        bad("unknown key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++i_;
    }
    if (!have_descr || !have_order || !have_shape) bad("needs the keys 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) { file_error(op_, path_, "bad .npy header (" + what + "): " + s_); }
  char peek() {
    if (i_ >= s_.size()) bad("it ends early");
    return s_[i_];
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    skip_space();
    char q = peek();
    if (q != '\'' && q != '"') bad("expected a string");
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) bad("an unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) return i_ += 4, true;
    if (s_.compare(i_, 5, "False") == 0) return i_ += 5, false;
    bad("fortran_order is neither True nor False");
  }
  Shape tuple() {
    Shape out;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      size_t start = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == start || i_ - start > 18) bad("a size that is not a number");
      out.push_back(std::stoll(s_.substr(start, i_ - start)));
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2's long
      skip_space();
      if (peek() == ',') ++i_;
      else if (peek() != ')') bad("expected ',' or ')' in the shape");
    }
    ++i_;
    return out;
  }
  void descr(const std::string& d, NpyHeader& h) {
    if (d.size() < 2) bad("descr '" + d + "'");
    char order = d[0];
    std::string type = d.substr(1);
    if (order != '<' && order != '>' && order != '|' && order != '=') {
      order = '=';
      type = d;
    }
    if (type == "b1" || type == "?") h.dtype = DType::Bool;
    else if (type == "i4") h.dtype = DType::Int32;
    else if (type == "i8") h.dtype = DType::Int64;
    else if (type == "f2") h.dtype = DType::Float16;
    else if (type == "f4") h.dtype = DType::Float32;
    else if (type == "f8") h.dtype = DType::Float64;
    else if (type == "c8") h.dtype = DType::Complex64;
    else if (type == "c16") h.dtype = DType::Complex128;
    else file_error(op_, path_, "numpy dtype '" + d + "' has no LazyFuse dtype (bool, int32, int64, float16, float32, float64, complex64, complex128 are read)");
    h.swap = order == '>' && dtype_size(h.dtype) > 1;
  }

  const std::string& s_;
  size_t i_ = 0;
  const char* op_;
  const std::string& path_;
};

NpyHeader read_header(const char* op, const std::string& path, const char* data, size_t size) {
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0) file_error(op, path, "not a .npy file (no \\x93NUMPY magic)");
  const unsigned major = static_cast<unsigned char>(data[6]);
  size_t len = 0, at = 0;
  if (major == 1) {
    len = static_cast<unsigned char>(data[8]) | static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8;
    at = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) file_error(op, path, "truncated .npy file (the header length is cut off)");
    for (int b = 3; b >= 0; --b) len = len << 8 | static_cast<unsigned char>(data[8 + b]);
    at = 12;
  } else {
    file_error(op, path, "unsupported .npy version " + std::to_string(major));
  }
  if (len > size - at) file_error(op, path, "truncated .npy file (the header says " + std::to_string(len) + " bytes, " + std::to_string(size - at) + " follow)");
  std::string text(data + at, len);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\0')) text.pop_back();
  NpyHeader h = HeaderParser(text, op, path).parse();
  h.data_offset = at + len;
  return h;
}

size_t element_bytes(const char* op, const std::string& path, const NpyHeader& h) {
  // rt::shape_problem's rule, every tensor's: the product of the non-zero sizes fits int64 too (a
  // shape (0, 1e18, 1e18) holds no element, but its strides overflow; numpy refuses it as well).
  std::string why = rt::shape_problem(h.shape, dtype_size(h.dtype));
  if (!why.empty()) file_error(op, path, why);
  size_t n = 1;
  for (int64_t s : h.shape)
    if (__builtin_mul_overflow(n, static_cast<size_t>(s), &n)) file_error(op, path, "the shape " + shape_str(h.shape) + " overflows");
  if (__builtin_mul_overflow(n, dtype_size(h.dtype), &n)) file_error(op, path, "the shape " + shape_str(h.shape) + " overflows");
  return n;
}

// A CPU tensor over `storage` (which holds the elements, already byte-swapped) in the file's order.
Tensor make_tensor(std::shared_ptr<rt::Storage> storage, const NpyHeader& h) {
  ir::Layout layout{ir::contiguous_strides(h.shape), 0};
  if (h.fortran) {  // column-major: a transposed view, no copy
    int64_t s = 1;
    for (size_t d = 0; d < h.shape.size(); ++d) {
      layout.strides[d] = s;
      s *= std::max<int64_t>(h.shape[d], 1);
    }
  }
  if (is_complex(h.dtype)) {  // the (re, im) pairs, a real buffer with a last dim of 2
    Shape shape = h.shape;
    shape.push_back(2);
    for (int64_t& st : layout.strides) st *= 2;
    layout.strides.push_back(1);
    Tensor r(ir::make_buffer(std::move(storage), complex_part(h.dtype), std::move(shape), std::move(layout)));
    return detail::wrap_complex(r, h.dtype);
  }
  return Tensor(ir::make_buffer(std::move(storage), h.dtype, h.shape, std::move(layout)));
}

void byte_swap(char* p, size_t bytes, size_t esize) {
  for (size_t i = 0; i + esize <= bytes; i += esize) std::reverse(p + i, p + i + esize);
}

// A tensor from a .npy image in memory.
Tensor tensor_from_npy(const char* op, const std::string& path, const char* data, size_t size) {
  NpyHeader h = read_header(op, path, data, size);
  const size_t bytes = element_bytes(op, path, h);
  if (bytes > size - h.data_offset)
    file_error(op, path, "truncated .npy file (" + shape_str(h.shape) + " " + dtype_name(h.dtype) + " needs " + std::to_string(bytes) +
                             " bytes of data, " + std::to_string(size - h.data_offset) + " are there)");
  auto storage = rt::Storage::allocate(Device::cpu(), bytes);
  if (bytes) std::memcpy(storage->data(), data + h.data_offset, bytes);
  const DType elem = is_complex(h.dtype) ? complex_part(h.dtype) : h.dtype;  // a complex number swaps by part
  if (h.swap) byte_swap(static_cast<char*>(storage->data()), bytes, dtype_size(elem));
  if (h.dtype == DType::Bool) canonical_bools(storage->data(), bytes);
  rt::note_value_range(*storage, elem, static_cast<int64_t>(bytes / dtype_size(elem)));
  return make_tensor(std::move(storage), h);
}

// ---- zip (for .npz): the parts numpy writes and reads.

uint32_t crc32_of(const char* p, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ static_cast<unsigned char>(p[i])) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put16(std::vector<char>& v, uint32_t x) {
  v.push_back(static_cast<char>(x & 0xff));
  v.push_back(static_cast<char>((x >> 8) & 0xff));
}
void put32(std::vector<char>& v, uint32_t x) {
  put16(v, x & 0xffff);
  put16(v, x >> 16);
}
uint32_t get16(const char* p) { return static_cast<unsigned char>(p[0]) | static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 8; }
uint32_t get32(const char* p) { return get16(p) | get16(p + 2) << 16; }
uint64_t get64(const char* p) { return get32(p) | static_cast<uint64_t>(get32(p + 4)) << 32; }

// Raw deflate through libz.so.1, loaded at the first compressed entry.
std::vector<char> inflate_entry(const std::string& path, const std::string& name, const char* src, size_t n, size_t out_size) {
  using InitFn = int (*)(z_streamp, int, const char*, int);
  using InflateFn = int (*)(z_streamp, int);
  using EndFn = int (*)(z_streamp);
  struct Zlib {
    InitFn init = nullptr;
    InflateFn inflate = nullptr;
    EndFn end = nullptr;
  };
  static const Zlib z = [] {
    Zlib out;
    if (void* lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL)) {
      out.init = reinterpret_cast<InitFn>(dlsym(lib, "inflateInit2_"));
      out.inflate = reinterpret_cast<InflateFn>(dlsym(lib, "inflate"));
      out.end = reinterpret_cast<EndFn>(dlsym(lib, "inflateEnd"));
    }
    return out;
  }();
  if (!z.init || !z.inflate || !z.end)
    file_error("load_npz", path, "entry '" + name + "' is deflate-compressed and libz.so.1 could not be loaded");
  // Deflate expands at most 1032:1 (RFC 1951: a 258-byte match per 2 bits at best), so a stated
  // size beyond that of the compressed bytes is a lie, refused before any allocation (a 193-byte
  // file claiming 4 GiB). Within it the output grows as inflate produces, so the memory follows
  // the bytes that really come out, never only the header's word.
  constexpr uint64_t kMaxRatio = 1032;
  if (out_size / kMaxRatio > n + 1)
    file_error("load_npz", path, "entry '" + name + "' claims " + std::to_string(out_size) + " bytes from " +
                                     std::to_string(n) + " compressed (more than deflate can expand; corrupt archive)");
  std::vector<char> out;
  z_stream s{};
  if (z.init(&s, -15, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK)
    file_error("load_npz", path, "zlib's inflateInit2 failed");
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src));
  s.avail_in = static_cast<uInt>(std::min<size_t>(n, UINT32_MAX));
  int r = Z_OK;
  size_t produced = 0;
  while (r == Z_OK && produced < out_size) {
    out.resize(std::min<size_t>(out_size, std::max<size_t>(size_t{1} << 20, 2 * out.size())));
    s.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    s.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, UINT32_MAX));
    const uInt room = s.avail_out;
    r = z.inflate(&s, Z_NO_FLUSH);
    produced += room - s.avail_out;
    if (r == Z_BUF_ERROR && s.avail_out > 0) break;  // no progress: the input ran out
  }
  if (r == Z_OK && produced == out_size && s.avail_in > 0) {  // the stream must end exactly here
    unsigned char extra;
    s.next_out = &extra;
    s.avail_out = 1;
    r = z.inflate(&s, Z_NO_FLUSH);
    if (s.avail_out == 0) r = Z_DATA_ERROR;  // more bytes than stated
  }
  z.end(&s);
  if (r != Z_STREAM_END || produced != out_size)
    file_error("load_npz", path, "entry '" + name + "' does not inflate to its stated " + std::to_string(out_size) + " bytes (corrupt archive)");
  return out;
}

}  // namespace

void save(const std::string& path, const Tensor& t) {
  detail::check_defined("save", {&t});
  std::vector<char> bytes = npy_bytes("save", path, t);
  write_file("save", path, {{bytes.data(), bytes.size()}});
}

Tensor load(const std::string& path) {
  std::vector<char> bytes = read_file("load", path);
  return tensor_from_npy("load", path, bytes.data(), bytes.size());
}

void savez(const std::string& path, const std::map<std::string, Tensor>& tensors) {
  std::vector<char> local, central;
  uint16_t count = 0;
  for (const auto& [name, t] : tensors) {
    detail::check_defined("savez", {&t});
    if (name.empty()) file_error("savez", path, "an entry has an empty name");
    if (++count == 0) file_error("savez", path, "more than 65535 tensors (zip64 archives are not written)");
    const std::string file = name + ".npy";
    std::vector<char> npy = npy_bytes("savez", path, t);
    if (npy.size() >= 0xFFFFFFFFu || local.size() + npy.size() >= 0xFFFFFFFFu)
      file_error("savez", path, "more than 4 GiB (zip64 archives are not written; save each tensor with lf::save)");
    const uint32_t crc = crc32_of(npy.data(), npy.size());
    const uint32_t offset = static_cast<uint32_t>(local.size());
    auto common = [&](std::vector<char>& v) {
      put16(v, 20);  // version needed: 2.0
      put16(v, 0);   // flags
      put16(v, 0);   // method: stored
      put16(v, 0);   // time
      put16(v, 0x21);  // date: 1980-01-01
      put32(v, crc);
      put32(v, static_cast<uint32_t>(npy.size()));
      put32(v, static_cast<uint32_t>(npy.size()));
      put16(v, static_cast<uint32_t>(file.size()));
      put16(v, 0);  // extra
    };
    put32(local, 0x04034b50);
    common(local);
    local.insert(local.end(), file.begin(), file.end());
    local.insert(local.end(), npy.begin(), npy.end());
    put32(central, 0x02014b50);
    put16(central, 20);  // made by
    common(central);
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, offset);
    central.insert(central.end(), file.begin(), file.end());
  }
  std::vector<char> end;
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, count);
  put16(end, count);
  put32(end, static_cast<uint32_t>(central.size()));
  put32(end, static_cast<uint32_t>(local.size()));
  put16(end, 0);
  write_file("savez", path, {{local.data(), local.size()}, {central.data(), central.size()}, {end.data(), end.size()}});
}

std::map<std::string, Tensor> load_npz(const std::string& path) {
  const char* op = "load_npz";
  std::vector<char> f = read_file(op, path);
  const char* base = f.data();
  const size_t size = f.size();
  // The end of central directory record: the last signature within 64 KiB + 22 bytes of the end.
  size_t eocd = std::string::npos;
  for (size_t i = size >= 22 ? size - 22 + 1 : 0; i-- > 0 && size - i <= 65535 + 22;) {
    if (get32(base + i) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) file_error(op, path, "not a zip archive (no end of central directory record; truncated?)");
  const uint32_t entries = get16(base + eocd + 10);
  uint64_t cd_size = get32(base + eocd + 12), cd_offset = get32(base + eocd + 16);
  if (cd_offset == 0xFFFFFFFFu || entries == 0xFFFF) file_error(op, path, "zip64 archives with over 4 GiB or 65535 entries are not read");
  if (cd_offset > size || cd_size > size - cd_offset) file_error(op, path, "the central directory lies outside the file (truncated?)");
  std::map<std::string, Tensor> out;
  size_t at = cd_offset;
  for (uint32_t e = 0; e < entries; ++e) {
    if (at + 46 > size || get32(base + at) != 0x02014b50) file_error(op, path, "bad central directory entry " + std::to_string(e));
    const char* h = base + at;
    const uint32_t flags = get16(h + 8), method = get16(h + 10), crc = get32(h + 16);
    uint64_t csize = get32(h + 20), usize = get32(h + 24), offset = get32(h + 42);
    const uint32_t name_len = get16(h + 28), extra_len = get16(h + 30), comment_len = get16(h + 32);
    if (at + 46 + name_len + extra_len > size) file_error(op, path, "bad central directory entry " + std::to_string(e));
    std::string name(h + 46, name_len);
    // zip64 extra field: the sizes and offset that did not fit, in this order.
    const char* extra_end = h + 46 + name_len + extra_len;
    for (const char* x = h + 46 + name_len; x + 4 <= extra_end;) {
      const uint32_t id = get16(x), len = get16(x + 2);
      const char* v = x + 4;
      // A field must end within the entry's extra data (which the check above keeps in the file).
      if (len > static_cast<size_t>(extra_end - v))
        file_error(op, path, "entry '" + name + "': an extra field runs past its entry (corrupt archive)");
      if (id == 1) {
        auto take = [&](uint64_t& field) {
          if (field == 0xFFFFFFFFu && v + 8 <= x + 4 + len) field = get64(v), v += 8;
        };
        take(usize);
        take(csize);
        take(offset);
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (flags & 1) file_error(op, path, "entry '" + name + "' is encrypted");
    if (offset > size || size - offset < 30 || get32(base + offset) != 0x04034b50) file_error(op, path, "entry '" + name + "': bad local header (truncated?)");
    const uint64_t data_at = offset + 30 + get16(base + offset + 26) + get16(base + offset + 28);
    if (data_at > size || csize > size - data_at) file_error(op, path, "entry '" + name + "' is cut off (truncated archive)");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    const std::string where = path + ":" + name;
    auto check_crc = [&](const char* p, size_t n) {
      if (crc32_of(p, n) != crc) file_error(op, path, "entry '" + name + "' fails its CRC-32 check (corrupt archive)");
    };
    if (method == 0) {
      check_crc(base + data_at, csize);
      out[name] = tensor_from_npy(op, where, base + data_at, csize);
    } else if (method == 8) {
      std::vector<char> raw = inflate_entry(path, name, base + data_at, csize, usize);
      check_crc(raw.data(), raw.size());
      out[name] = tensor_from_npy(op, where, raw.data(), raw.size());
    } else {
      file_error(op, path, "entry '" + name + "' uses compression method " + std::to_string(method) + " (stored and deflate are read)");
    }
  }
  return out;
}

}  // namespace lf

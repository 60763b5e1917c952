// The safetensors format (Hugging Face's, in which model weights ship): an 8-byte little-endian
// header length N, N bytes of JSON ({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets":
// [begin, end]}, ..., "__metadata__": {"key": "value"}}), then the tensors' little-endian,
// row-major bytes (offsets relative to the end of the header). Every field is checked against the
// file before a byte of data is read.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "codegen/ir/node.h"
#include "frontend/file_io.h"
#include "lazyfuse/interop.h"
#include "lazyfuse/ops.h"
#include "runtime/storage.h"

namespace lf {
namespace {

using detail::file_error;

const char* st_dtype(DType d) {
  switch (d) {
    case DType::Bool: return "BOOL";
    case DType::Int32: return "I32";
    case DType::Int64: return "I64";
    case DType::Float16: return "F16";
    case DType::BFloat16: return "BF16";
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Complex64:  // the format has no complex dtype
    case DType::Complex128: return "";
  }
  return "";
}

// A JSON value, as much of JSON as the header uses: objects, arrays, strings, integers.
struct Json {
  enum Kind { Object, Array, String, Number } kind = Number;
  std::map<std::string, Json> object;
  std::vector<Json> array;
  std::string string;
  uint64_t number = 0;
  bool negative_or_fraction = false;
};

class JsonParser {
 public:
  JsonParser(const std::string& s, const std::string& path) : s_(s), path_(path) {}

  Json document() {
    Json v = value(0);
    space();
    if (i_ != s_.size()) fail("text after the header's object");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    file_error("load_safetensors", path_, "bad header at byte " + std::to_string(i_) + ": " + what);
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char next() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (next() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  Json value(int depth) {
    if (depth > 16) fail("nested too deeply");
    char c = next();
    Json v;
    if (c == '{') {
      v.kind = Json::Object;
      ++i_;
      if (next() == '}') {
        ++i_;
        return v;
      }
      while (true) {
        std::string key = str();
        expect(':');
        if (!v.object.emplace(key, value(depth + 1)).second) fail("the key \"" + key + "\" appears twice");
        if (next() == ',') {
          ++i_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Array;
      ++i_;
      if (next() == ']') {
        ++i_;
        return v;
      }
      while (true) {
        v.array.push_back(value(depth + 1));
        if (next() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::String;
      v.string = str();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Number;
      if (c == '-') {
        v.negative_or_fraction = true;
        ++i_;
      }
      size_t start = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (__builtin_mul_overflow(v.number, 10, &v.number) ||
            __builtin_add_overflow(v.number, static_cast<uint64_t>(s_[i_] - '0'), &v.number))
          fail("a number that does not fit 64 bits");
        ++i_;
      }
      if (i_ == start) fail("a number without digits");
      if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
        v.negative_or_fraction = true;
        while (i_ < s_.size() && std::strchr("0123456789.eE+-", s_[i_])) ++i_;
      }
      return v;
    }
    fail("expected a value");
  }
  std::string str() {
    if (next() != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (c == '\\') {
        if (i_ >= s_.size()) fail("unterminated string");
        char e = s_[i_++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            if (i_ + 4 > s_.size()) fail("a short \\u escape");
            unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
            i_ += 4;
            if (cp < 0x80) {
              out += static_cast<char>(cp);
            } else if (cp < 0x800) {
              out += static_cast<char>(0xC0 | (cp >> 6));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            } else {
              out += static_cast<char>(0xE0 | (cp >> 12));
              out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            }
            break;
          }
          default: fail("a bad escape");
        }
        continue;
      }
      out += c;
    }
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  std::vector<Tensor> host;
  std::string header = "{";
  uint64_t offset = 0;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      header += (first ? "" : ",") + json_string(k) + ":" + json_string(v);
      first = false;
    }
    header += "}";
  }
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") file_error(op, path, "\"__metadata__\" is not a tensor name the format allows");
    if (!t.defined()) file_error(op, path, "tensor \"" + name + "\" is an empty Tensor");
    if (is_complex(t.dtype()))
      file_error(op, path, "tensor \"" + name + "\" is " + dtype_name(t.dtype()) +
                               ", which the format has no dtype for; save lf::view_as_real(t) instead");
    host.push_back(t.contiguous().to(Device::cpu()).contiguous());
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype());
    std::string shape;
    for (int64_t s : t.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(s);
    header += std::string(header.size() > 1 ? "," : "") + json_string(name) + ":{\"dtype\":\"" + st_dtype(t.dtype()) +
              "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  char size[8];
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) size[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::vector<std::pair<const char*, size_t>> parts{{size, 8}, {header.data(), header.size()}};
  for (const Tensor& t : host)
    if (t.numel() > 0)
      parts.emplace_back(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.numel()) * dtype_size(t.dtype()));
  detail::write_file(op, path, parts);
}

std::map<std::string, Tensor> load_safetensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  const char* op = "load_safetensors";
  std::vector<char> bytes = detail::read_file(op, path);
  if (bytes.size() < 8) file_error(op, path, "shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[static_cast<size_t>(i)])) << (8 * i);
  if (n > bytes.size() - 8) file_error(op, path, "the header claims " + std::to_string(n) + " bytes; the file has " + std::to_string(bytes.size() - 8) + " after the length");
  const std::string text(bytes.data() + 8, n);
  Json doc = JsonParser(text, path).document();
  if (doc.kind != Json::Object) file_error(op, path, "the header is not a JSON object");
  const uint64_t data_start = 8 + n, data_size = bytes.size() - data_start;
  std::map<std::string, Tensor> out;
  for (const auto& [name, entry] : doc.object) {
    if (name == "__metadata__") {
      if (entry.kind != Json::Object) file_error(op, path, "__metadata__ is not an object");
      for (const auto& [k, v] : entry.object) {
        if (v.kind != Json::String) file_error(op, path, "__metadata__ \"" + k + "\" is not a string");
        if (metadata) (*metadata)[k] = v.string;
      }
      continue;
    }
    const std::string where = "tensor \"" + name + "\": ";
    auto field = [&](const char* key, Json::Kind kind) -> const Json& {
      auto it = entry.object.find(key);
      if (entry.kind != Json::Object || it == entry.object.end() || it->second.kind != kind)
        file_error(op, path, where + "no valid \"" + key + "\"");
      return it->second;
    };
    const std::string& dt = field("dtype", Json::String).string;
    DType dtype;
    if (dt == "BOOL") dtype = DType::Bool;
    else if (dt == "I32") dtype = DType::Int32;
    else if (dt == "I64") dtype = DType::Int64;
    else if (dt == "F16") dtype = DType::Float16;
    else if (dt == "BF16") dtype = DType::BFloat16;
    else if (dt == "F32") dtype = DType::Float32;
    else if (dt == "F64") dtype = DType::Float64;
    else file_error(op, path, where + "dtype " + dt + " is not one LazyFuse has (BOOL, I32, I64, F16, BF16, F32, F64)");
    Shape shape;
    uint64_t count = 1;
    for (const Json& d : field("shape", Json::Array).array) {
      if (d.kind != Json::Number || d.negative_or_fraction || d.number > static_cast<uint64_t>(INT64_MAX))
        file_error(op, path, where + "a size that is not a non-negative integer");
      shape.push_back(static_cast<int64_t>(d.number));
      if (__builtin_mul_overflow(count, d.number, &count)) file_error(op, path, where + "its element count overflows");
    }
    const Json& offs = field("data_offsets", Json::Array);
    if (offs.array.size() != 2 || offs.array[0].kind != Json::Number || offs.array[1].kind != Json::Number ||
        offs.array[0].negative_or_fraction || offs.array[1].negative_or_fraction)
      file_error(op, path, where + "data_offsets must be two non-negative integers");
    const uint64_t begin = offs.array[0].number, end = offs.array[1].number;
    uint64_t want = 0;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dtype_size(dtype)), &want))
      file_error(op, path, where + "its byte size overflows");
    if (end < begin || end > data_size)
      file_error(op, path, where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                               ") lie outside the " + std::to_string(data_size) + " bytes of data");
    if (end - begin != want)
      file_error(op, path, where + std::to_string(end - begin) + " bytes of data for " + dt + shape_str(shape) +
                               ", which takes " + std::to_string(want));
    auto storage = rt::Storage::allocate(Device::cpu(), static_cast<size_t>(want));
    if (want) std::memcpy(storage->data(), bytes.data() + data_start + begin, static_cast<size_t>(want));
    if (dtype == DType::Bool) detail::canonical_bools(storage->data(), static_cast<size_t>(want));
    rt::note_value_range(*storage, dtype, static_cast<int64_t>(count));
    ir::Layout layout{ir::contiguous_strides(shape), 0};
    out.emplace(name, Tensor(ir::make_buffer(std::move(storage), dtype, shape, std::move(layout))));
  }
  return out;
}

}  // namespace lf

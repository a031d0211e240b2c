#include "gpu/smi.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace kopt::gpu {

using nlohmann::json;

const std::vector<std::string> &nvidia_query_fields() {
  static const std::vector<std::string> fields = {"index",           "uuid",        "name",
                                                  "utilization.gpu", "memory.used", "memory.total"};
  return fields;
}

namespace {

bool not_available(std::string_view value) {
  value = util::trim(value);
  return value.empty() || value.front() == '[' || value == "N/A" || value == "n/a" ||
         value == "UNKNOWN" || value == "unknown";
}

// A number that may carry a unit after it ("5038 MiB"); -1 when the tool could not tell.
double number_or_unknown(std::string_view value, const std::string &where) {
  value = util::trim(value);
  if (not_available(value)) {
    return -1;
  }
  size_t end = 0;
  while (end < value.size() &&
         (std::isdigit(static_cast<unsigned char>(value[end])) || value[end] == '.' ||
          value[end] == ',' || value[end] == '-' || value[end] == 'e' || value[end] == '+')) {
    ++end;
  }
  return util::parse_double(value.substr(0, end ? end : value.size()), where);
}

std::vector<std::string> nonblank_lines(std::string_view text, std::vector<int> &numbers) {
  std::vector<std::string> lines;
  int number = 0;
  for (auto &line : util::split(text, '\n')) {
    ++number;
    if (!util::trim(line).empty()) {
      lines.emplace_back(util::trim(line));
      numbers.push_back(number);
    }
  }
  return lines;
}

} // namespace

std::vector<GpuStatus> parse_nvidia_query(std::string_view text, const std::string &source,
                                          const std::vector<std::string> &fields) {
  std::vector<int> numbers;
  std::vector<std::string> lines = nonblank_lines(text, numbers);
  std::vector<GpuStatus> gpus;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string where = source + ":" + std::to_string(numbers[i]);
    std::vector<std::string> values = util::split(lines[i], ',');
    if (values.size() != fields.size()) {
      throw Error(where + ": expected " + std::to_string(fields.size()) + " fields (" +
                  util::join(fields, ", ") + "), got " + std::to_string(values.size()));
    }
    GpuStatus gpu;
    for (size_t f = 0; f < fields.size(); ++f) {
      std::string value(util::trim(values[f]));
      std::string at = where + ": " + fields[f];
      if (fields[f] == "index") {
        gpu.index = static_cast<int>(util::parse_int(value, at));
      } else if (fields[f] == "uuid") {
        gpu.uuid = value;
      } else if (fields[f] == "name") {
        gpu.name = value;
      } else if (fields[f] == "utilization.gpu") {
        gpu.utilization_pct = number_or_unknown(value, at);
      } else if (fields[f] == "memory.used") {
        gpu.memory_used_mib = number_or_unknown(value, at);
      } else if (fields[f] == "memory.total") {
        gpu.memory_total_mib = number_or_unknown(value, at);
      }
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<ComputeProcess> parse_nvidia_apps(std::string_view text, const std::string &source) {
  util::CsvTable table = util::parse_csv(text, source);
  for (auto &name : table.header) {
    name = std::string(util::trim(name));
    // "used_gpu_memory [MiB]" and "used_memory [MiB]" both name the memory column.
    if (name.rfind("used_gpu_memory", 0) == 0 || name.rfind("used_memory", 0) == 0) {
      name = "used_memory";
    }
  }
  int uuid_col = table.column("gpu_uuid");
  int pid_col = table.column("pid");
  int name_col = table.column("process_name");
  int memory_col = table.find_column("used_memory");
  std::vector<ComputeProcess> processes;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto &row = table.rows[r];
    ComputeProcess process;
    process.gpu_uuid = std::string(util::trim(row[uuid_col]));
    process.pid = util::parse_int(row[pid_col], table.where(r) + ": pid");
    process.name = std::string(util::trim(row[name_col]));
    if (memory_col >= 0) {
      process.used_mib = number_or_unknown(row[memory_col], table.where(r) + ": used_memory");
    }
    processes.push_back(std::move(process));
  }
  return processes;
}

namespace {

double json_number(const json &value, const std::string &where) {
  if (value.is_number()) {
    return value.get<double>();
  }
  if (value.is_string()) {
    return number_or_unknown(value.get<std::string>(), where);
  }
  return -1;
}

const json *member(const json &object, const char *key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string rocm_string(const json &card, std::initializer_list<const char *> keys) {
  for (const char *key : keys) {
    if (const json *value = member(card, key); value && value->is_string()) {
      return value->get<std::string>();
    }
  }
  return "";
}

ComputeProcess rocm_process(const std::string &pid, const std::string &fields,
                            const std::string &where) {
  // `name, gpu count, vram bytes, sdma, cu occupancy`, as rocm-smi's print2DArray joins them.
  std::vector<std::string> parts = util::split(fields, ',');
  ComputeProcess process;
  process.pid = util::parse_int(pid, where);
  process.name = parts.empty() ? "" : std::string(util::trim(parts[0]));
  if (parts.size() > 2) {
    double bytes = number_or_unknown(parts[2], where);
    process.used_mib = bytes < 0 ? -1 : bytes / (1024.0 * 1024.0);
  }
  return process;
}

} // namespace

SmiSample parse_rocm_smi_json(std::string_view text, const std::string &source) {
  json root = util::parse_json(std::string(text), source);
  if (!root.is_object()) {
    throw Error(source + ": expected a JSON object of \"cardN\" entries");
  }
  SmiSample sample;
  for (const auto &item : root.items()) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string &key = item.key();
    const json &card = item.value();
    if (key.rfind("card", 0) == 0) {
      std::string where = source + ": " + key;
      GpuStatus gpu;
      gpu.index = static_cast<int>(util::parse_int(key.substr(4), where));
      gpu.name = rocm_string(card, {"Card Series", "Card series", "Device Name", "Card model"});
      auto number = [&](const char *field) {
        const json *value = member(card, field);
        return value ? json_number(*value, where + ": " + field) : -1.0;
      };
      gpu.utilization_pct = number("GPU use (%)");
      gpu.memory_used_pct = number("GPU Memory Allocated (VRAM%)");
      double used = number("VRAM Total Used Memory (B)");
      double total = number("VRAM Total Memory (B)");
      gpu.memory_used_mib = used < 0 ? -1 : used / (1024.0 * 1024.0);
      gpu.memory_total_mib = total < 0 ? -1 : total / (1024.0 * 1024.0);
      sample.gpus.push_back(std::move(gpu));
    } else if (key == "system" && card.is_object()) {
      for (const auto &[name, value] : card.items()) {
        if (name.rfind("PID", 0) == 0 && value.is_string()) {
          sample.processes.push_back(
              rocm_process(name.substr(3), value.get<std::string>(), source + ": system: " + name));
        }
      }
    }
  }
  std::sort(sample.gpus.begin(), sample.gpus.end(),
            [](const GpuStatus &a, const GpuStatus &b) { return a.index < b.index; });
  return sample;
}

SmiSample parse_rocm_smi_text(std::string_view text, const std::string &source) {
  static const std::regex metric(R"(^GPU\[(\d+)\]\s*:\s*(.+?):\s*(.*)$)");
  SmiSample sample;
  auto gpu_at = [&](int index) -> GpuStatus & {
    for (auto &gpu : sample.gpus) {
      if (gpu.index == index) {
        return gpu;
      }
    }
    sample.gpus.push_back(GpuStatus{});
    sample.gpus.back().index = index;
    return sample.gpus.back();
  };
  bool in_pids = false;
  int number = 0;
  for (const auto &raw : util::split(text, '\n')) {
    ++number;
    std::string line(util::trim(raw));
    std::string where = source + ":" + std::to_string(number);
    std::smatch m;
    if (line.rfind("KFD process information", 0) == 0) {
      in_pids = true;
      continue;
    }
    if (in_pids) {
      if (line.rfind("No KFD PIDs", 0) == 0 || line.rfind("PID", 0) == 0) {
        continue;
      }
      if (line.empty() || line.front() == '=') {
        in_pids = false;
        continue;
      }
      // PID, PROCESS NAME (may hold blanks), GPU(s), VRAM USED, SDMA USED, CU OCCUPANCY.
      std::vector<std::string> words;
      std::string word;
      for (char c : line + " ") {
        if (c == ' ' || c == '\t') {
          if (!word.empty()) {
            words.push_back(std::move(word));
            word.clear();
          }
        } else {
          word += c;
        }
      }
      if (words.size() < 6) {
        throw Error(where +
                    ": expected PID, PROCESS NAME, GPU(s), VRAM USED, SDMA USED, CU "
                    "OCCUPANCY, got '" +
                    line + "'");
      }
      ComputeProcess process;
      process.pid = util::parse_int(words[0], where + ": PID");
      process.name = util::join(std::vector<std::string>(words.begin() + 1, words.end() - 4), " ");
      double bytes = number_or_unknown(words[words.size() - 3], where + ": VRAM USED");
      process.used_mib = bytes < 0 ? -1 : bytes / (1024.0 * 1024.0);
      sample.processes.push_back(std::move(process));
      continue;
    }
    if (std::regex_match(line, m, metric)) {
      // An index is a small number: anything else is refused here, not wrapped or thrown past.
      int64_t index = m[1].length() > 5 ? -1 : util::parse_int(m[1].str(), where + ": GPU index");
      if (index < 0 || index > 65535) {
        throw Error(where + ": GPU index: expected an integer from 0 to 65535, got '" + m[1].str() +
                    "'");
      }
      GpuStatus &gpu = gpu_at(static_cast<int>(index));
      std::string field = m[2];
      std::string value = m[3];
      if (field == "GPU use (%)") {
        gpu.utilization_pct = number_or_unknown(value, where + ": " + field);
      } else if (field == "GPU Memory Allocated (VRAM%)" || field == "GPU memory use (%)") {
        gpu.memory_used_pct = number_or_unknown(value, where + ": " + field);
      }
    }
  }
  std::sort(sample.gpus.begin(), sample.gpus.end(),
            [](const GpuStatus &a, const GpuStatus &b) { return a.index < b.index; });
  return sample;
}

namespace {

// {"value": 283, "unit": "MB"} (or a bare number) in MiB.
double amd_mib(const json *value, const std::string &where) {
  if (!value) {
    return -1;
  }
  if (!value->is_object()) {
    return json_number(*value, where);
  }
  const json *number = member(*value, "value");
  double mib = number ? json_number(*number, where) : -1;
  const json *unit = member(*value, "unit");
  std::string u = unit && unit->is_string() ? unit->get<std::string>() : "MB";
  if (mib < 0) {
    return -1;
  }
  if (u == "B") {
    return mib / (1024.0 * 1024.0);
  }
  if (u == "KB" || u == "KiB") {
    return mib / 1024.0;
  }
  if (u == "GB" || u == "GiB") {
    return mib * 1024.0;
  }
  return mib;
}

double amd_number(const json *value, const std::string &where) {
  if (!value) {
    return -1;
  }
  if (value->is_object()) {
    const json *number = member(*value, "value");
    return number ? json_number(*number, where) : -1;
  }
  return json_number(*value, where);
}

const json &amd_gpu_list(const json &root, const std::string &source) {
  if (root.is_array()) {
    return root;
  }
  if (const json *list = member(root, "gpu_data"); list && list->is_array()) {
    return *list;
  }
  throw Error(source + ": expected a JSON list of GPUs or {\"gpu_data\": [...]}");
}

int amd_index(const json &entry, const std::string &where) {
  const json *gpu = member(entry, "gpu");
  if (!gpu || !gpu->is_number_integer()) {
    throw Error(where + ": expected an integer \"gpu\" index");
  }
  return gpu->get<int>();
}

} // namespace

std::vector<GpuStatus> parse_amd_smi_metric(std::string_view text, const std::string &source) {
  json root = util::parse_json(std::string(text), source);
  std::vector<GpuStatus> gpus;
  const json &list = amd_gpu_list(root, source);
  for (size_t i = 0; i < list.size(); ++i) {
    const json &entry = list[i];
    std::string where = source + ": gpu entry " + std::to_string(i);
    GpuStatus gpu;
    gpu.index = amd_index(entry, where);
    where = source + ": gpu " + std::to_string(gpu.index);
    const json *usage = member(entry, "usage");
    gpu.utilization_pct =
        usage ? amd_number(member(*usage, "gfx_activity"), where + ": usage.gfx_activity") : -1;
    if (const json *memory = member(entry, "mem_usage")) {
      gpu.memory_used_mib = amd_mib(member(*memory, "used_vram"), where + ": mem_usage.used_vram");
      gpu.memory_total_mib =
          amd_mib(member(*memory, "total_vram"), where + ": mem_usage.total_vram");
    }
    if (const json *asic = member(entry, "asic")) {
      if (const json *name = member(*asic, "market_name"); name && name->is_string()) {
        gpu.name = name->get<std::string>();
      }
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<ComputeProcess> parse_amd_smi_process(std::string_view text,
                                                  const std::string &source) {
  json root = util::parse_json(std::string(text), source);
  std::vector<ComputeProcess> processes;
  const json &list = amd_gpu_list(root, source);
  for (size_t i = 0; i < list.size(); ++i) {
    const json &entry = list[i];
    int index = amd_index(entry, source + ": gpu entry " + std::to_string(i));
    std::string where = source + ": gpu " + std::to_string(index);
    const json *items = member(entry, "process_list");
    if (!items || !items->is_array()) {
      throw Error(where + ": expected a \"process_list\" array");
    }
    for (const json &item : *items) {
      const json *info = member(item, "process_info");
      if (!info || info->is_string()) {
        continue; // "No running processes detected"
      }
      ComputeProcess process;
      process.gpu = index;
      if (const json *pid = member(*info, "pid"); pid && pid->is_number_integer()) {
        process.pid = pid->get<int64_t>();
      }
      if (const json *name = member(*info, "name"); name && name->is_string()) {
        process.name = name->get<std::string>();
      }
      const json *memory = member(*info, "memory_usage");
      const json *vram = memory ? member(*memory, "vram_mem") : nullptr;
      process.used_mib = amd_mib(vram ? vram : member(*info, "mem_usage"), where + ": mem_usage");
      processes.push_back(std::move(process));
    }
  }
  return processes;
}

} // namespace kopt::gpu

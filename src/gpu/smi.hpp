#pragma once

// Parsers for what nvidia-smi, rocm-smi and amd-smi print about GPUs and their compute
// processes. Numbers a tool cannot report ("[N/A]", "N/A") read as -1. amd-smi's "MB" is
// taken as MiB, as amd-smi computes it in 2^20 bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::gpu {

/// One GPU as a monitoring tool saw it at one moment.
struct GpuStatus {
  int index = -1;
  std::string uuid; ///< nvidia-smi only
  std::string name;
  double utilization_pct = -1;
  double memory_used_mib = -1;
  double memory_total_mib = -1;
  double memory_used_pct = -1; ///< rocm-smi's VRAM% when it gives no byte counts
};

/// A process holding a compute context on a GPU.
struct ComputeProcess {
  int gpu = -1;         ///< GPU index; -1 with gpu_uuid empty: not attributed to a GPU
  std::string gpu_uuid; ///< nvidia-smi names the GPU by UUID
  int64_t pid = 0;
  std::string name;
  double used_mib = -1;
};

/// One reading of a tool: every GPU and every compute process.
struct SmiSample {
  std::vector<GpuStatus> gpus;
  std::vector<ComputeProcess> processes;
};

/// The fields kopt asks nvidia-smi --query-gpu for, in order.
const std::vector<std::string> &nvidia_query_fields();

/// Parses `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits`; `fields` names the
/// columns (index, uuid, name, utilization.gpu, memory.used, memory.total are read, others
/// ignored). Throws kopt::Error naming `source`:line on a wrong field count or a bad number.
std::vector<GpuStatus>
parse_nvidia_query(std::string_view text, const std::string &source,
                   const std::vector<std::string> &fields = nvidia_query_fields());

/// Parses `nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv`
/// (with its header line); a header alone means no process.
std::vector<ComputeProcess> parse_nvidia_apps(std::string_view text, const std::string &source);

/// Parses `rocm-smi --showuse --showmemuse --showpids --json`: "cardN" objects and the
/// "system" object's "PID<n>" entries (which do not say which GPU a process uses).
SmiSample parse_rocm_smi_json(std::string_view text, const std::string &source);

/// Parses the text form of `rocm-smi --showuse --showmemuse --showpids`.
SmiSample parse_rocm_smi_text(std::string_view text, const std::string &source);

/// Parses `amd-smi metric --json` (a list of GPUs, or {"gpu_data": [...]} in newer releases).
std::vector<GpuStatus> parse_amd_smi_metric(std::string_view text, const std::string &source);

/// Parses `amd-smi process --json`: per GPU a process_list whose entries are process_info
/// objects, or the string "No running processes detected".
std::vector<ComputeProcess> parse_amd_smi_process(std::string_view text, const std::string &source);

} // namespace kopt::gpu

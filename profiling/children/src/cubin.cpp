// Reading a cubin's functions and device-side launch calls (cdpkit/children/cubin.hpp).

#include <cdpkit/children/cubin.hpp>

#include "line_table.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace cdpkit::children {

namespace {

constexpr unsigned char sto_cuda_entry = 0x10;  // st_other of a __global__ function's symbol
constexpr std::size_t max_launches = 1u << 20;  // launch calls read from one image at most

/// A bounds-checked view of the image.
class image_view {
 public:
  image_view(const void* data, std::size_t size) : data_(static_cast<const unsigned char*>(data)), size_(size) {}
  template <class T>
  std::optional<T> read(std::uint64_t offset) const {
    if (data_ == nullptr || offset > size_ || size_ - offset < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, data_ + offset, sizeof v);
    return v;
  }
  /// The NUL-terminated string at `offset` within [begin, begin + length) of the image.
  std::optional<std::string> string_at(std::uint64_t begin, std::uint64_t length, std::uint64_t offset) const {
    if (begin > size_ || length > size_ - begin || offset >= length) return std::nullopt;
    const auto* p = reinterpret_cast<const char*>(data_ + begin + offset);
    return std::string(p, strnlen(p, static_cast<std::size_t>(length - offset)));
  }
  bool holds(std::uint64_t offset, std::uint64_t length) const { return offset <= size_ && length <= size_ - offset; }
  const unsigned char* at(std::uint64_t offset) const { return data_ + offset; }

 private:
  const unsigned char* data_;
  std::size_t size_;
};

/// Each launch call's source file and line, from the cubin's .debug_line (nvcc -lineinfo or -G);
/// calls of a cubin without it keep an empty file.
template <class Symbol>
void add_source_lines(const image_view& img, const Elf64_Ehdr& eh, const std::vector<Elf64_Shdr>& sections,
                      std::size_t symtab, const std::vector<Symbol>& symbols, cubin_info& out) {
  if (out.launches.empty() || eh.e_shstrndx >= sections.size()) return;
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  const auto named = [&](const char* wanted) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < sections.size(); ++i)
      if (img.string_at(names.sh_offset, names.sh_size, sections[i].sh_name) == std::string(wanted)) return i;
    return std::nullopt;
  };
  const auto lines = named(".debug_line");
  if (!lines || sections[*lines].sh_type == SHT_NOBITS || !img.holds(sections[*lines].sh_offset, sections[*lines].sh_size))
    return;
  std::vector<detail::line_relocation> relocations;
  for (const Elf64_Shdr& rs : sections) {
    if (rs.sh_type != SHT_RELA || rs.sh_info != *lines || rs.sh_link != symtab || !img.holds(rs.sh_offset, rs.sh_size))
      continue;
    for (std::uint64_t k = 0; k < rs.sh_size / sizeof(Elf64_Rela); ++k) {
      const auto r = *img.read<Elf64_Rela>(rs.sh_offset + k * sizeof(Elf64_Rela));
      const std::uint64_t sym = ELF64_R_SYM(r.r_info);
      if (sym < symbols.size() && symbols[sym].function) relocations.push_back({r.r_offset, symbols[sym].name, r.r_addend});
    }
  }
  std::map<std::uint64_t, std::string> inline_names;  // .debug_str: the inlined functions' names by offset
  if (const auto strs = named(".debug_str"); strs && img.holds(sections[*strs].sh_offset, sections[*strs].sh_size)) {
    const Elf64_Shdr& sh = sections[*strs];
    for (std::uint64_t at = 0; at < sh.sh_size && inline_names.size() < 100000;) {
      std::string name = img.string_at(sh.sh_offset, sh.sh_size, at).value_or("");
      const std::uint64_t next = at + name.size() + 1;
      inline_names.emplace(at, std::move(name));
      at = next;
    }
  }
  const Elf64_Shdr& sh = sections[*lines];
  const detail::line_table table =
      detail::read_line_table(img.at(sh.sh_offset), static_cast<std::size_t>(sh.sh_size), relocations, inline_names);
  if (!table.problem.empty() && out.problem.empty()) out.problem = "line table: " + table.problem;
  for (auto& l : out.launches) detail::source_line(table, l.caller, l.offset, l.file, l.line);
}

}  // namespace

bool is_launch_entry(const std::string& function_name) {
  return function_name.find("LaunchDevice") != std::string::npos;
}

cubin_info read_cubin(const void* image, std::size_t size) {
  cubin_info out;
  const image_view img(image, size);
  const auto eh = img.read<Elf64_Ehdr>(0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) {
    out.problem = "not a 64-bit ELF image";
    return out;
  }
  if (eh->e_shentsize != sizeof(Elf64_Shdr) || !img.holds(eh->e_shoff, std::uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    out.problem = "the section headers lie outside the image";
    return out;
  }
  std::vector<Elf64_Shdr> sections(eh->e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i) sections[i] = *img.read<Elf64_Shdr>(eh->e_shoff + i * sizeof(Elf64_Shdr));

  // the symbol table
  struct symbol {
    std::string name;
    std::uint64_t value = 0, size = 0;
    std::uint32_t section = 0;
    bool function = false, kernel = false;
  };
  std::vector<symbol> symbols;
  std::size_t symtab = sections.size();
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (sections[i].sh_type == SHT_SYMTAB) {
      symtab = i;
      break;
    }
  if (symtab == sections.size()) {
    out.problem = "no symbol table";
    return out;
  }
  const Elf64_Shdr& st = sections[symtab];
  if (st.sh_link >= sections.size() || !img.holds(st.sh_offset, st.sh_size)) {
    out.problem = "the symbol table lies outside the image";
    return out;
  }
  const Elf64_Shdr& strings = sections[st.sh_link];
  for (std::uint64_t k = 0; k < st.sh_size / sizeof(Elf64_Sym); ++k) {
    const auto sym = img.read<Elf64_Sym>(st.sh_offset + k * sizeof(Elf64_Sym));
    symbol s;
    if (sym) {
      s.name = img.string_at(strings.sh_offset, strings.sh_size, sym->st_name).value_or("");
      s.value = sym->st_value;
      s.size = sym->st_size;
      s.section = sym->st_shndx;
      s.function = ELF64_ST_TYPE(sym->st_info) == STT_FUNC;
      s.kernel = s.function && (sym->st_other & sto_cuda_entry) != 0;
    }
    if (s.function && !s.name.empty()) out.functions.push_back({s.name, s.size, s.kernel});
    symbols.push_back(std::move(s));
  }

  // the relocations of each function's code, in offset order
  std::map<std::uint32_t, std::vector<const symbol*>> functions_in_section;
  for (const auto& s : symbols)
    if (s.function && !s.name.empty() && s.size > 0) functions_in_section[s.section].push_back(&s);
  for (const Elf64_Shdr& rs : sections) {
    if ((rs.sh_type != SHT_RELA && rs.sh_type != SHT_REL) || rs.sh_link != symtab) continue;
    const auto fn = functions_in_section.find(rs.sh_info);
    if (fn == functions_in_section.end()) continue;  // not code (debug info, globals)
    if (!img.holds(rs.sh_offset, rs.sh_size)) {
      out.problem = "a relocation section lies outside the image";
      continue;
    }
    const std::size_t entry = rs.sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
    struct reloc {
      std::uint64_t offset;
      const symbol* target;
      std::int64_t addend;
    };
    std::vector<reloc> relocs;
    for (std::uint64_t k = 0; k < rs.sh_size / entry; ++k) {
      const std::uint64_t at = rs.sh_offset + k * entry;
      std::uint64_t offset = 0, info = 0;
      std::int64_t addend = 0;
      if (rs.sh_type == SHT_RELA) {
        const auto r = *img.read<Elf64_Rela>(at);
        offset = r.r_offset, info = r.r_info, addend = r.r_addend;
      } else {
        const auto r = *img.read<Elf64_Rel>(at);
        offset = r.r_offset, info = r.r_info;
      }
      const std::uint64_t sym = ELF64_R_SYM(info);
      if (sym >= symbols.size()) continue;
      relocs.push_back({offset, &symbols[sym], addend});
    }
    std::stable_sort(relocs.begin(), relocs.end(), [](const reloc& a, const reloc& b) { return a.offset < b.offset; });
    for (const symbol* caller : fn->second) {
      if (is_launch_entry(caller->name)) continue;  // the runtime's own code
      std::string last_kernel;
      for (const auto& r : relocs) {
        if (r.offset < caller->value || r.offset - caller->value >= caller->size) continue;
        if (is_launch_entry(r.target->name)) {
          if (out.launches.size() >= max_launches) {  // a real cubin has far fewer: the image is corrupt
            out.problem = "more than " + std::to_string(max_launches) + " launch calls: the rest are not read";
            break;
          }
          cubin_launch l;
          l.caller = caller->name;
          l.offset = r.offset - caller->value;
          l.child = last_kernel;
          out.launches.push_back(std::move(l));
        } else if (r.target->kernel && r.addend == 0) {
          last_kernel = r.target->name;  // a kernel's address taken (a return address has an addend)
        }
      }
    }
  }
  std::sort(out.launches.begin(), out.launches.end(), [](const cubin_launch& a, const cubin_launch& b) {
    return std::tie(a.caller, a.offset) < std::tie(b.caller, b.offset);
  });
  add_source_lines(img, *eh, sections, symtab, symbols, out);
  return out;
}

}  // namespace cdpkit::children

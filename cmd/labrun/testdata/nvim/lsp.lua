-- Drives labrun's language server from a real Neovim (0.7 and later), headless: the
-- setup docs/editor.md gives, then what a user sees. Run by TestLSPInNeovim:
--   LABRUN=<labrun> LAB_FILE=<lab.cue> OUT=<file> nvim --headless -u NONE -c 'luafile lsp.lua'
-- It writes one line per finding to OUT and quits.
local out = {}
local function say(s) table.insert(out, s) end

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("LAB_FILE")))
local id = vim.lsp.start_client({
  name = "labrun",
  cmd = { os.getenv("LABRUN"), "lsp" },
  root_dir = vim.fn.fnamemodify(os.getenv("LAB_FILE"), ":h"),
})
vim.lsp.buf_attach_client(0, id)

-- Diagnostics, as Neovim decodes them (byte columns of the buffer, 0-based).
local got = vim.wait(10000, function() return #vim.diagnostic.get(0) >= 2 end, 20)
say("diagnostics arrived " .. tostring(got))
for _, d in ipairs(vim.diagnostic.get(0)) do
  say(string.format("diagnostic %d:%d-%d %s", d.lnum, d.col, d.end_col, d.message:sub(1, 30)))
end

local function request(method, params)
  local res = vim.lsp.buf_request_sync(0, method, params, 10000) or {}
  for _, r in pairs(res) do
    if r.result then return r.result end
  end
end
local uri = vim.uri_from_bufnr(0)

-- Completion in the second expectation, before "fortio" (line 13, UTF-16 column 3).
local list = request("textDocument/completion", { textDocument = { uri = uri }, position = { line = 13, character = 3 } })
local labels = {}
for _, it in ipairs((list and list.items) or {}) do table.insert(labels, it.label) end
table.sort(labels)
say("completion " .. table.concat(labels, " "))

-- Hover and definition on fortio in the first expectation ("delta.rq_totl == fortio.requests").
local hover = request("textDocument/hover", { textDocument = { uri = uri }, position = { line = 12, character = 22 } })
say("hover " .. ((hover and hover.contents and hover.contents.value) or ""):gsub("\n", " "):sub(1, 60))
local def = request("textDocument/definition", { textDocument = { uri = uri }, position = { line = 12, character = 22 } })
if def and def[1] then
  say(string.format("definition %d:%d", def[1].range.start.line, def[1].range.start.character))
end

-- The quick fix of the misspelled stat, asked with the line's diagnostics in the protocol's
-- form (as Neovim's own code_action asks), applied as Neovim applies a workspace edit.
local diags = vim.lsp.diagnostic.get_line_diagnostics(0, 12)
say("fixable " .. #diags)
local actions = request("textDocument/codeAction", { textDocument = { uri = uri }, range = diags[1].range, context = { diagnostics = diags } }) or {}
say("action " .. ((actions[1] and actions[1].title) or "none"))
if actions[1] then
  vim.lsp.util.apply_workspace_edit(actions[1].edit, "utf-16")
  say("line 13 now " .. vim.api.nvim_buf_get_lines(0, 12, 13, false)[1]:gsub("^%s+", ""))
  local fixed = vim.wait(10000, function() return #vim.diagnostic.get(0) == 1 end, 20)
  say("after the fix " .. tostring(fixed) .. " " .. #vim.diagnostic.get(0) .. " diagnostic(s)")
end

vim.fn.writefile(out, os.getenv("OUT"))
vim.lsp.stop_client(id)
vim.cmd("qa!")

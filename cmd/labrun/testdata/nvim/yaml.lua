-- Drives labrun's language server from a real Neovim, headless, over a spec whose apply reads
-- a YAML file with a wrong object (TestLSPInNeovimYAML):
--   LABRUN=<labrun> LAB_FILE=<lab.cue> YAML_FILE=<istio.yaml> OUT=<file> nvim --headless -u NONE -c 'luafile yaml.lua'
-- It writes what Neovim shows in the spec's buffer and in the YAML's to OUT and quits.
local out = {}
local function say(s) table.insert(out, s) end

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("LAB_FILE")))
local id = vim.lsp.start_client({
  name = "labrun",
  cmd = { os.getenv("LABRUN"), "lsp" },
  root_dir = vim.fn.fnamemodify(os.getenv("LAB_FILE"), ":h"),
})
vim.lsp.buf_attach_client(0, id)

local got = vim.wait(10000, function() return #vim.diagnostic.get(0) >= 1 end, 20)
say("spec diagnostics arrived " .. tostring(got))
for _, d in ipairs(vim.diagnostic.get(0)) do
  say(string.format("spec %d:%d %s", d.lnum, d.col, d.message:sub(1, 60)))
end
-- The YAML's buffer, opened as a user opens it after the spec.
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("YAML_FILE")))
for _, d in ipairs(vim.diagnostic.get(0)) do
  say(string.format("yaml %d:%d %s", d.lnum, d.col, d.message:sub(1, 60)))
end

vim.fn.writefile(out, os.getenv("OUT"))
vim.lsp.stop_client(id)
vim.cmd("qa!")

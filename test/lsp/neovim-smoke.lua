-- A real editor's LSP client: headless Neovim (Debian 12's 0.7) starts
-- skyline-lsp, opens FILE and prints the diagnostics it received, one a
-- line, as file:line:column: message [code]. test_neovim.py runs it.
local lsp, root, file, mock = os.getenv("SKYLINE_LSP"), os.getenv("ROOT"), os.getenv("FILE"), os.getenv("MOCK")
local client = vim.lsp.start_client({
  name = "skyline-lsp", cmd = { lsp }, root_dir = root,
  init_options = { arguments = { "--", "-std=c++17", "-isystem", mock } },
})
vim.cmd("edit " .. file)
vim.lsp.buf_attach_client(0, client)
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do
  io.stdout:write(string.format("%s:%d:%d: %s [%s]\n", vim.fn.fnamemodify(file, ":t"), d.lnum + 1, d.col + 1, d.message, d.code or d.user_data and d.user_data.lsp and d.user_data.lsp.code or "?"))
end
if not ok then io.stdout:write("no diagnostics\n") end
vim.lsp.stop_client(client)
vim.cmd("qa!")

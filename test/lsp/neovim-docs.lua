-- Run after docs/editors.md's Neovim 0.7 set-up (loaded as init.lua):
-- opens FILE by its absolute path, prints the directory Neovim runs in and
-- the diagnostics it received, one a line, as line:column: message [code],
-- then presses K on the batch-size literal and prints the first line of
-- the hover the server answered ("hover: nil" where K asked for none).
-- test_neovim.py runs it.
local file = os.getenv("FILE")
local hover
vim.lsp.handlers["textDocument/hover"] = function(_, result)
  hover = result and result.contents and result.contents.value or "empty"
end
vim.cmd("edit " .. vim.fn.fnameescape(file))
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
io.stdout:write("cwd: " .. vim.fn.getcwd() .. "\n")
for _, d in ipairs(vim.diagnostic.get(0)) do
  io.stdout:write(string.format("%d:%d: %s [%s]\n", d.lnum + 1, d.col + 1,
                                d.message, tostring(d.code)))
end
if not ok then io.stdout:write("no diagnostics\n") end
vim.api.nvim_win_set_cursor(0, { 3, 28 })
vim.cmd("normal K") -- with the set-up's mapping, as a user presses it
vim.wait(10000, function() return hover ~= nil end, 50)
io.stdout:write("hover: " .. tostring(hover and vim.split(hover, "\n")[1]) .. "\n")
vim.cmd("qa!")

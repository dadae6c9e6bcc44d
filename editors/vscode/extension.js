// The smallest VS Code client of skyline-lsp: starts the server for C++
// files with the workspace's settings as its initializationOptions.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

exports.activate = function (context) {
  const config = vscode.workspace.getConfiguration('skyline');
  client = new LanguageClient(
    'skyline-lsp', 'skyline-lsp',
    { command: config.get('serverPath') },
    {
      documentSelector: [{ scheme: 'file', language: 'cpp' }],
      initializationOptions: {
        compilationDatabase: config.get('compilationDatabase'),
        arguments: config.get('arguments'),
      },
    });
  return client.start();
};

exports.deactivate = function () {
  return client ? client.stop() : undefined;
};

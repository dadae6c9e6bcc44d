;;; eglot-smoke.el --- docs/editors.md's eglot set-up, run headless -*- lexical-binding: t -*-
;;
;; Opens examples/mnist/mnist.cpp with skyline-lsp through eglot and prints
;; the diagnostics it received, the hover at the batch size and the code
;; actions there. Not part of the test suite (Emacs is not among the
;; project's dependencies); run by hand, from the repository's root:
;;
;;   emacs --batch -Q [-L <eglot's directory> ...] -l editors/emacs/eglot-smoke.el
;;
;; Checked with Debian 12's Emacs 28.2 and elpa-eglot 1.9 (docs/editors.md).
(require 'eglot)
(require 'flymake)

(defvar skyline-smoke-root
  (expand-file-name "../.." (file-name-directory (or load-file-name buffer-file-name))))

;; The set-up docs/editors.md gives, with this checkout's server.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `((c++-mode c++-ts-mode)
                 . (,(expand-file-name "build/bin/skyline-lsp" skyline-smoke-root)
                    :initializationOptions (:compilationDatabase "build")))))

(defun skyline-smoke-wait (done seconds)
  "Process output until DONE returns non-nil or SECONDS pass."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (< (float-time) deadline) (not (funcall done)))
      (accept-process-output nil 0.2))))

(find-file (expand-file-name "examples/mnist/mnist.cpp" skyline-smoke-root))
(c++-mode)
(apply #'eglot (eglot--guess-contact))
(skyline-smoke-wait (lambda () (flymake-diagnostics)) 120)
;; Every finding comes in the one publication; a moment for flymake.
(skyline-smoke-wait (lambda () nil) 2)
(dolist (d (sort (flymake-diagnostics)
                 (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))
  (message "diagnostic %d: %s: %s" (line-number-at-pos (flymake-diagnostic-beg d))
           (flymake-diagnostic-type d)
           (car (split-string (flymake-diagnostic-text d) "\n"))))
(goto-char (point-min))
(search-forward "kTrainBatchSize = ")
(let ((hover (jsonrpc-request (eglot-current-server) :textDocument/hover
                              (eglot--TextDocumentPositionParams))))
  (message "hover: %s" (car (split-string (format "%s" (plist-get (plist-get hover :contents) :value))
                                          "\n"))))
(let* ((here (eglot--pos-to-lsp-position (point)))
       (actions (jsonrpc-request (eglot-current-server) :textDocument/codeAction
                                 (list :textDocument (eglot--TextDocumentIdentifier)
                                       :range (list :start here :end here)
                                       :context (list :diagnostics [])))))
  (mapc (lambda (action) (message "code action: %s" (plist-get action :title))) actions))
(eglot-shutdown (eglot-current-server))
;;; eglot-smoke.el ends here

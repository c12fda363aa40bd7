// The console's only script: the copy button of a key value shown once. Everything else is plain
// HTML forms, so the console works with scripts off (the value can then be selected by hand).
'use strict';
document.addEventListener('click', function (event) {
  var button = event.target instanceof Element ? event.target.closest('button[data-copy-target]') : null;
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy-target'));
  var status = document.getElementById(button.getAttribute('data-copy-status'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(
    function () { if (status) status.textContent = 'Copied to the clipboard.'; },
    function () { if (status) status.textContent = 'Could not copy: select the value and copy it by hand.'; }
  );
});

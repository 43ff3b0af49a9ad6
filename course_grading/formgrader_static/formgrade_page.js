// What nbgrader's formgrade page did in inline scripts and onclick attributes, as a file
// (the course's Content-Security-Policy allows scripts from files of this server only).
/* global $, linkTo */
function toggle_name(on) {
  $(".name-shown").tooltip("hide");
  $(".name-hidden").tooltip("hide");
  if (on) {
    $(".name-shown").show();
    $(".name-hidden").hide();
  } else {
    $(".name-hidden").show();
    $(".name-shown").hide();
  }
}

$(document).ready(function () {
  "use strict";
  $("[data-link]").each(function () {
    $(this).map(linkTo("notebook", $(this).data("link"))).removeAttr("data-link");
  });
  $("span.glyphicon.name-hidden").tooltip({title: "Show student name", placement: "bottom", trigger: "hover"});
  $("span.glyphicon.name-shown").tooltip({title: "Hide student name", placement: "bottom", trigger: "hover"});
});

// onclick attributes of the templates become data-course-onclick="<function name>[:<arg>]"
document.addEventListener("click", function (event) {
  "use strict";
  var target = event.target.closest ? event.target.closest("[data-course-onclick]") : null;
  if (!target) {
    return;
  }
  var parts = target.getAttribute("data-course-onclick").split(":");
  var fn = window[parts[0]];
  if (typeof fn === "function") {
    fn(parts.length > 1 ? parts[1] === "true" : undefined);
  }
});

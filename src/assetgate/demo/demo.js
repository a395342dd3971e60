/*! assetgate demo script: try /demo.js?min=1 (this licence comment stays) */
"use strict";

// Show the size of every image once it has loaded.
function describe(image) {
    const caption = image.parentElement.querySelector("figcaption");
    if (caption) {
        caption.textContent += " - " + image.naturalWidth + "x" + image.naturalHeight;
    }
}

for (const image of document.querySelectorAll("img")) {
    if (image.complete) {
        describe(image);
    } else {
        image.addEventListener("load", () => describe(image));
    }
}

// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

/// Minimal ERC-20-style token used as EVM test data (movegate issue 8).
/// Only name/symbol/decimals/totalSupply/balanceOf/transfer; no allowances.
contract MiniToken {
    string public name = "MiniToken";
    string public symbol = "MINI";
    uint8 public decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        require(balanceOf[msg.sender] >= amount, "insufficient balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}
